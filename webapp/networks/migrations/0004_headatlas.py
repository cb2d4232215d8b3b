import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Each network's head atlas (what each attention head does), computed by a worker."""

    dependencies = [
        ("networks", "0003_network_capabilities"),
    ]

    operations = [
        migrations.CreateModel(
            name="HeadAtlas",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("status", models.CharField(choices=[("queued", "queued"), ("running", "running"), ("ready", "ready"),
                                                     ("failed", "failed")], default="queued", max_length=16)),
                ("done", models.IntegerField(default=0, help_text="Positions scored so far")),
                ("total", models.IntegerField(default=0, help_text="Positions to score")),
                ("data", models.JSONField(blank=True, default=dict, help_text="analysis.heads.HeadAtlas.to_dict()")),
                ("error", models.TextField(blank=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("network", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="head_atlas",
                                                 to="networks.network")),
            ],
        ),
    ]
