from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The documented JSON API (README, "The JSON API"), built on Django REST framework."""

    name = "webapp.api"
    label = "sightline_api"
