from django.db import migrations, models


def describe_registered(apps, schema_editor):
    """Networks registered before the lens's description was stored get it here, from their file, so
    the web process never loads a checkpoint to describe the lens. A file that cannot be read now is
    left undescribed: the lens says so until a worker checks the network again (shipped networks are
    registered again on every start; an upload is checked again from the admin)."""
    from analysis.checkpoint import load_evaluator
    from analysis.lens.description import describe_model

    Network = apps.get_model("networks", "Network")
    for network in Network.objects.filter(kind="checkpoint", status="ready").exclude(file=""):
        try:
            evaluator = load_evaluator(network.file.path, "cpu", name=network.name)
            network.lens_description = describe_model(evaluator.model, evaluator.encoding).to_json()
        except Exception:  # noqa: BLE001 - any unreadable file: described at its next check
            continue
        network.save(update_fields=["lens_description"])


class Migration(migrations.Migration):
    """What the lens can take apart on a network, stored at check time
    (``analysis.lens.description.LensDescription``)."""

    dependencies = [
        ("networks", "0005_value_sanity_by_site"),
    ]

    operations = [
        migrations.AddField(
            model_name="network",
            name="lens_description",
            field=models.JSONField(blank=True, default=dict,
                                   help_text="What the lens can take apart, computed when a worker checks the network "
                                             "(analysis.lens.description.LensDescription.to_json())"),
        ),
        migrations.RunPython(describe_registered, migrations.RunPython.noop),
    ]
