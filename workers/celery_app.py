"""The Celery application, configured from Django settings (``CELERY_*``).

Start a worker with ``celery -A workers.celery_app worker -Q gpu,cpu``. GPU workers use
``--pool solo`` (CUDA does not survive fork) and load networks lazily inside
the worker process; see README for the scale-out recipe.
"""

from __future__ import annotations

import os

from celery import Celery, concurrency, signals
from kombu import transport

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

# ``--pool threads`` and ``--pool solo`` get a cold shutdown that stops a running job
# (Celery's own raise NotImplementedError there); see workers/shutdown.py.
concurrency.ALIASES.update(threads="workers.shutdown:CooperativeThreadPool",
                           solo="workers.shutdown:CooperativeSoloPool")

# Workers reconnect when Redis restarts instead of dying; see workers/broker.py.
transport.TRANSPORT_ALIASES.update(redis="workers.broker:Transport", rediss="workers.broker:Transport")

app = Celery("sightline")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["workers"])

_reapers: dict[str, object] = {}


@signals.worker_ready.connect
def _start_reaper(sender=None, **kwargs) -> None:
    """Every ``celery worker`` looks for jobs that nobody runs any more (workers/reaper.py).

    ``worker_ready`` comes from the command-line worker only, not from the in-process test
    workers of ``celery.contrib.testing``, whose test database is gone after their test."""
    from workers.reaper import Reaper

    _reapers.setdefault("reaper", Reaper().start())


@signals.worker_shutdown.connect
def _stop_reaper(sender=None, **kwargs) -> None:
    reaper = _reapers.pop("reaper", None)
    if reaper is not None:
        reaper.stop()
