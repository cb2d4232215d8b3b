from django.db import migrations


def describe_stale(apps, schema_editor):
    """Networks described before the lens knew patching (no ``version`` in the description: it cannot
    say whether ``patch``, ``head_patch`` or ``attention_zero`` apply) are described again from their
    file, so the studies app can refuse a method at submission (a 422) rather than in the worker.
    A file that cannot be read now keeps its old description until the network is checked again."""
    from analysis.checkpoint import load_evaluator
    from analysis.lens.description import LensDescription, describe_model

    Network = apps.get_model("networks", "Network")
    for network in Network.objects.filter(kind="checkpoint", status="ready").exclude(file=""):
        if LensDescription.is_current(network.lens_description):
            continue
        try:
            evaluator = load_evaluator(network.file.path, "cpu", name=network.name)
            network.lens_description = describe_model(evaluator.model, evaluator.encoding).to_json()
        except Exception:  # noqa: BLE001 - any unreadable file: described at its next check
            continue
        network.save(update_fields=["lens_description"])


class Migration(migrations.Migration):
    """Stale lens descriptions (``analysis.lens.description.VERSION``) described again."""

    dependencies = [
        ("networks", "0007_network_retired"),
    ]

    operations = [
        migrations.RunPython(describe_stale, migrations.RunPython.noop),
    ]
