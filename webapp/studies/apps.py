from django.apps import AppConfig


class StudiesConfig(AppConfig):
    """A study: one network, one method, one position set and a seed, run over many positions."""

    name = "webapp.studies"
    verbose_name = "Studies"
