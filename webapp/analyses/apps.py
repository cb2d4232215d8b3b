from django.apps import AppConfig


class AnalysesConfig(AppConfig):
    name = "webapp.analyses"
    label = "analyses"
    verbose_name = "Analyses"
