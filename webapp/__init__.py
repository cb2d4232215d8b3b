"""The Sightline Django project. Importing it binds ``@shared_task`` to our Celery app."""

from workers.celery_app import app as celery_app

__all__ = ["celery_app"]
