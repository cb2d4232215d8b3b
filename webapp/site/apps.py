from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The site as a whole: ``serve`` (Redis, workers, the web server) and its process and
    static-file plumbing. It knows no feature."""

    name = "webapp.site"
    label = "sightline_site"
    verbose_name = "Site"
