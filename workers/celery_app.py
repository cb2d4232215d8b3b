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

_reapers: dict[int, object] = {}


@signals.worker_init.connect
def _start_reaper(sender=None, **kwargs) -> None:
    """Every worker looks for jobs that nobody runs any more (workers/reaper.py)."""
    from workers.reaper import Reaper

    _reapers[id(sender)] = Reaper().start()


@signals.worker_shutdown.connect
def _stop_reaper(sender=None, **kwargs) -> None:
    reaper = _reapers.pop(id(sender), None)
    if reaper is not None:
        reaper.stop()
