"""The studies app's Celery task (found by autodiscovery; the name never changes), on the studies'
lane (``SIGHTLINE_STUDIES_QUEUE``), and the reaper that queues a lost study again."""

from __future__ import annotations

import logging
import threading

from celery import shared_task, signals
from django.conf import settings
from django.db import close_old_connections

from webapp.studies import resume, runner

log = logging.getLogger(__name__)


@shared_task(name=resume.TASK, acks_late=True)
def run_study(study_id: str) -> str:
    """One study, resumed from its stored items when an earlier worker did part of it."""
    return runner.run(study_id)


_stop = threading.Event()


def _reap() -> None:
    while not _stop.wait(settings.SIGHTLINE_REAP_INTERVAL_S):
        try:
            resume.reap_once()
        except Exception:  # the database or the broker is away: next round
            log.warning("reaping lost studies failed", exc_info=True)
        finally:
            close_old_connections()


@signals.worker_ready.connect
def _start_reaper(sender=None, **kwargs) -> None:
    """Every command-line worker queues lost studies again (not the in-process test workers)."""
    _stop.clear()
    threading.Thread(target=_reap, name="study-reaper", daemon=True).start()


@signals.worker_shutdown.connect
def _stop_reaper(sender=None, **kwargs) -> None:
    _stop.set()
