from django.apps import AppConfig


class JobsConfig(AppConfig):
    """Jobs: a game analysed by a network, its page, its worker run and its live messages.

    The label stays ``analyses`` (the app's earlier name): its tables, migrations and task names
    are unchanged by the move."""

    name = "webapp.jobs"
    label = "analyses"
    verbose_name = "Analyses"
