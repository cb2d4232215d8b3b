from django.apps import AppConfig


class ProbesConfig(AppConfig):
    """Concept probes on the site: a network's concept atlas and the game page's Concepts panel."""

    name = "webapp.probes"
    verbose_name = "Concept probes"
