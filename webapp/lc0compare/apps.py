from django.apps import AppConfig


class Lc0CompareConfig(AppConfig):
    """'Compare with lc0': lc0's own search beside Sightline's on a job's position."""

    name = "webapp.lc0compare"
    verbose_name = "Compare with lc0"

    def ready(self) -> None:
        from webapp.lc0compare import panel  # noqa: F401  (registers the game page's lc0 panel)
