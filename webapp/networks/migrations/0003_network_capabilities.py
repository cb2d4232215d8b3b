from django.db import migrations, models

# The only encoding and the only family there were before this migration.
_LC0_PLANES = "lc0/INPUT_CLASSICAL_112_PLANE"


def _capabilities(apps, schema_editor):
    """has_policy / has_wdl / has_attention -> capabilities; attention's shape from the config."""
    Network = apps.get_model("networks", "Network")
    for network in Network.objects.all():
        layers, heads = network.config.get("layers"), network.config.get("heads")
        attention = [layers, heads] if network.has_attention and isinstance(layers, int) and isinstance(heads, int) \
            else None
        network.capabilities = {"policy": network.has_policy, "value": True, "wdl": network.has_wdl,
                                "action_values": False, "attention": attention}
        if network.kind == "checkpoint":
            network.input_encoding = _LC0_PLANES
        network.save(update_fields=["capabilities", "input_encoding"])


def _flags(apps, schema_editor):
    Network = apps.get_model("networks", "Network")
    for network in Network.objects.all():
        caps = network.capabilities or {}
        network.has_policy, network.has_wdl = bool(caps.get("policy")), bool(caps.get("wdl"))
        network.has_attention = bool(caps.get("attention"))
        network.save(update_fields=["has_policy", "has_wdl", "has_attention"])


class Migration(migrations.Migration):
    """A network's outputs are one ``capabilities`` value (from its family), and it records
    its input encoding, from which the site keys a job's positions."""

    dependencies = [
        ("networks", "0002_network_status"),
    ]

    operations = [
        migrations.AddField(
            model_name="network",
            name="input_encoding",
            field=models.CharField(blank=True, help_text="The board encoding the checkpoint was trained on "
                                                         "(analysis.encoding)", max_length=64),
        ),
        migrations.AddField(
            model_name="network",
            name="capabilities",
            field=models.JSONField(blank=True, default=dict,
                                   help_text="What its outputs offer: policy, value, WDL, action values, "
                                             "attention [layers, heads] (analysis.evaluator.Capabilities)"),
        ),
        migrations.RunPython(_capabilities, _flags),
        migrations.RemoveField(model_name="network", name="has_policy"),
        migrations.RemoveField(model_name="network", name="has_wdl"),
        migrations.RemoveField(model_name="network", name="has_attention"),
    ]
