from django.apps import AppConfig


class LensConfig(AppConfig):
    """The lens on a job's position: attention maps, the logit lens, heads, units and neurons."""

    name = "webapp.lens"
    verbose_name = "Lens"
