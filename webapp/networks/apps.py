from django.apps import AppConfig


class NetworksConfig(AppConfig):
    name = "webapp.networks"
    label = "networks"
    verbose_name = "Networks"
