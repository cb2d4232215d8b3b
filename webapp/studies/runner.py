"""The worker's side of a study: under its lease, ``analysis.studies.run_study`` with the items
already stored (a resumed study reuses them), each new item stored and the progress published as it
comes, stopping between items when the study is cancelled or the lease is lost."""

from __future__ import annotations

import logging

from django.db import IntegrityError
from django.utils import timezone

from webapp.ondemand import lease
from webapp.studies import library
from webapp.studies.library import Source, Stopped, StudyInput
from webapp.studies.live import publish
from webapp.studies.models import Study, StudyItem

log = logging.getLogger(__name__)

CLAIMED = "claimed"


def spec_fields(study: Study) -> dict:
    """``StudySpec``'s fields for a stored study (the network by its checkpoint file)."""
    source = Source(study.source_kind, study.source_name, study.source_text, study.limit)
    model = str(study.network.path) if study.network.path else study.network.name
    return {"method": study.method, "model": model, "positions": source.library(),
            "settings": dict(study.settings), "seed": study.seed}


def run(study_id: str) -> str:
    """Run one study to its end (or its cancel); the final status, or "claimed"/"missing"."""
    owner = lease.new_owner()
    held = Study.objects.filter(pk=study_id, status__in=Study.ACTIVE)
    if not lease.claim(held, owner):
        study = Study.objects.filter(pk=study_id).first()
        return "missing" if study is None else (CLAIMED if study.status in Study.ACTIVE else study.status)
    mine = Study.objects.filter(pk=study_id, lease_owner=owner)
    mine.filter(status=Study.Status.QUEUED).update(status=Study.Status.RUNNING, started_at=timezone.now())
    study = Study.objects.select_related("network").get(pk=study_id)
    publish(study)
    done = dict(StudyItem.objects.filter(study=study).values_list("index", "result"))
    with lease.Heartbeat(lambda: lease.renew(mine.filter(status=Study.Status.RUNNING), owner),
                         lease.lease_seconds() / 3.0, f"study-{study_id}") as heartbeat:

        def should_stop() -> bool:
            return heartbeat.lost.is_set() or not mine.filter(status=Study.Status.RUNNING).exists()

        def on_item(index: int, result: dict) -> None:
            try:
                StudyItem.objects.create(study=study, index=index, result=result)
            except IntegrityError:  # stored by an earlier delivery: the same result under the same seed
                pass

        def on_progress(count: int, total: int) -> None:
            mine.update(done=count, total=total)
            study.done, study.total = count, total
            publish(study)

        try:
            result = library.run(spec_fields(study), done=done, on_item=on_item, on_progress=on_progress,
                                 should_stop=should_stop)
        except Stopped:
            return _stopped(study_id, owner)
        except StudyInput as exc:
            return _finish(study_id, owner, Study.Status.FAILED, error=exc.message)
        except Exception as exc:
            log.exception("study %s failed", study_id)
            return _finish(study_id, owner, Study.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
    summary = {key: value for key, value in result.items() if key != "items"}
    return _finish(study_id, owner, Study.Status.DONE, result=summary,
                   code_version=str(result.get("code_version", ""))[:64])


def _finish(study_id: str, owner: str, status: str, **fields) -> str:
    """The final state, written only while the lease is ours and the study is still running."""
    if not Study.objects.filter(pk=study_id, lease_owner=owner, status=Study.Status.RUNNING).update(
            status=status, lease_owner="", lease_until=None, finished_at=timezone.now(), **fields):
        return _stopped(study_id, owner)
    publish(Study.objects.get(pk=study_id))
    return status


def _stopped(study_id: str, owner: str) -> str:
    """Cancelled (the cancel stored its status) or the lease lost: hand the lease back, keep the items."""
    Study.objects.filter(pk=study_id, lease_owner=owner).update(lease_owner="", lease_until=timezone.now())
    study = Study.objects.filter(pk=study_id).first()
    if study is not None:
        publish(study)
    return study.status if study is not None else "missing"
