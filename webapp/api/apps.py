from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The documented JSON API (docs/api.md), built on Django REST framework."""

    name = "webapp.api"
    label = "sightline_api"
