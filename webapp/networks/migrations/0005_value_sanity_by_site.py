from django.db import migrations


def forget_file_verdicts(apps, schema_editor):
    """Rows registered before the site ran the value sanity suite itself carry the file's own claim.

    Drop it: such a network shows "value not verified" until it is registered again (shipped
    networks are, on every start) or checked again from the admin, which runs the suite here.
    """
    Network = apps.get_model("networks", "Network")
    for network in Network.objects.filter(metrics__has_key="value_sanity"):
        network.metrics = {k: v for k, v in network.metrics.items() if k != "value_sanity"}
        network.save(update_fields=["metrics"])


class Migration(migrations.Migration):
    """The value sanity verdict is the site's own run, never the checkpoint file's claim."""

    dependencies = [
        ("networks", "0004_headatlas"),
    ]

    operations = [
        migrations.RunPython(forget_file_verdicts, migrations.RunPython.noop),
    ]
