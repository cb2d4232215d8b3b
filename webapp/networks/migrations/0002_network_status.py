from django.db import migrations, models


class Migration(migrations.Migration):
    """Networks get a check status; those registered before were checked in the request: ready."""

    dependencies = [
        ("networks", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="network",
            name="status",
            field=models.CharField(choices=[("checking", "checking (a worker is loading it)"), ("ready", "ready"),
                                            ("rejected", "rejected")], default="ready", max_length=16),
        ),
        migrations.AlterField(
            model_name="network",
            name="status",
            field=models.CharField(choices=[("checking", "checking (a worker is loading it)"), ("ready", "ready"),
                                            ("rejected", "rejected")], default="checking", max_length=16),
        ),
        migrations.AddField(
            model_name="network",
            name="status_message",
            field=models.TextField(blank=True, help_text="Why the check refused the checkpoint"),
        ),
    ]
