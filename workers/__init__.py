"""Celery app and tasks: thin glue between the site and the analysis library."""
