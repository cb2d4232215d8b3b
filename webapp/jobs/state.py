"""A job's whole state as JSON: what the game page starts from and the API's ``GET /api/jobs/<id>/``."""

from __future__ import annotations

from typing import Callable

from webapp.jobs.live.messages import job_snapshot
from webapp.networks.summary import network_brief


def job_state(job, absolute_uri: Callable[[str], str]) -> dict:
    return {"id": str(job.id), "network": network_brief(job.network, absolute_uri), "nodes": job.nodes,
            **job_snapshot(job)}
