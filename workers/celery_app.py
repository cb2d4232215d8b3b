"""The Celery application, configured from Django settings (``CELERY_*``).

The tasks live in the Django apps they serve (``webapp/<app>/tasks.py``) and are found by
autodiscovery when a worker starts; the site sends them by name (``workers.dispatch``).

Start a worker with ``celery -A workers.celery_app worker -Q gpu,cpu`` for the users' work and one
with ``-Q background`` (the background lane: checks and head atlases, ``SIGHTLINE_BACKGROUND_QUEUE``)
for the rest. GPU workers use
``--pool solo`` (CUDA does not survive fork) and load networks lazily inside
the worker process; see docs/scaling.md for the scale-out recipe.
"""

from __future__ import annotations

import os

from celery import Celery, concurrency
from kombu import transport

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

# ``--pool threads`` and ``--pool solo`` get a cold shutdown that stops a running job, where Celery's
# own pools refuse one; see workers/shutdown.py.
concurrency.ALIASES.update(threads="workers.shutdown:CooperativeThreadPool",
                           solo="workers.shutdown:CooperativeSoloPool")

# Workers reconnect when Redis restarts instead of dying; see workers/broker.py.
transport.TRANSPORT_ALIASES.update(redis="workers.broker:Transport", rediss="workers.broker:Transport")

app = Celery("sightline")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Every installed Django app's ``tasks`` module (Celery's Django fixup lists the apps).
app.autodiscover_tasks()
