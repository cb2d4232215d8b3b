"""How much attention work one analysis and one browser session may queue.

Anyone with a job's link can ask for any position's attention maps, and each new
one is a forward pass on a worker. Two limits bound that; a request over either
gets a 429 with a message and ``Retry-After``. Maps already computed (or being
computed) are served without counting.

- Per analysis: at most ``PENDING_PER_JOB`` computations for its positions queued
  and not finished, counted in the database so every web process sees the same
  number. Entries older than ``PENDING_WINDOW`` no longer count, so a computation
  lost with its worker cannot block the analysis for good.
- Per browser session: at most ``PER_SESSION_PER_WINDOW`` new computations per
  ``SESSION_WINDOW`` (a client without cookies gets a new session each time, which
  the per-analysis limit still holds).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta

from django.http import HttpRequest
from django.utils import timezone

from webapp.analyses.models import AnalysisJob, AttentionMap

PENDING_PER_JOB = 8
PENDING_WINDOW = timedelta(minutes=2)
PER_SESSION_PER_WINDOW = 60
SESSION_WINDOW_S = 60
SESSION_KEY = "attention_window"  # [window start (epoch seconds), computations queued in it]


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after_s: int


def refuse_new_computation(request: HttpRequest, job: AnalysisJob) -> Refusal | None:
    """None (and the computation is counted) when ``request`` may queue one more for ``job``."""
    keys = {node["key"] for node in job.nodes if node.get("key")}
    pending = AttentionMap.objects.filter(
        network_checksum=job.network.checksum, status=AttentionMap.Status.PENDING, position_key__in=keys,
        created_at__gte=timezone.now() - PENDING_WINDOW).count()
    if pending >= PENDING_PER_JOB:
        return Refusal(f"{pending} attention maps of this analysis are being computed; at most {PENDING_PER_JOB} "
                       f"are queued at a time. Try again in a moment.", 2)
    now = time.time()
    start, count = request.session.get(SESSION_KEY) or (now, 0)
    if now - start >= SESSION_WINDOW_S:
        start, count = now, 0
    if count >= PER_SESSION_PER_WINDOW:
        wait = max(1, int(start + SESSION_WINDOW_S - now) + 1)
        return Refusal(f"This browser has asked for {count} new attention maps in the last minute, the limit; "
                       f"try again in {wait} s.", wait)
    request.session[SESSION_KEY] = [start, count + 1]
    return None
