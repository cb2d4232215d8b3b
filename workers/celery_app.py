"""The Celery application, configured from Django settings (``CELERY_*``).

Start a worker with ``celery -A workers.celery_app worker -Q gpu,cpu``. GPU workers use
``--pool solo`` (CUDA does not survive fork) and load networks lazily inside
the worker process; see README for the scale-out recipe.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("sightline")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["workers"])
