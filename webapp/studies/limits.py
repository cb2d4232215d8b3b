"""Fair use of the studies' worker: a client may have ``SIGHTLINE_STUDIES_PER_CLIENT`` studies queued
or running, the site ``SIGHTLINE_STUDIES_PER_SITE``; over either, the one refusal (429,
``webapp.ondemand.refused.Refused``) with a Retry-After from the studies ahead's progress."""

from __future__ import annotations

from django.conf import settings

from webapp.ondemand.refused import Refused
from webapp.studies.resume import active

RETRY_AFTER_S = 30


def refusal(client: str) -> Refused | None:
    """The 429 when ``client`` (a hashed key) may not start another study now, else None."""
    running = active()
    mine = running.filter(client=client).count()
    if mine >= settings.SIGHTLINE_STUDIES_PER_CLIENT:
        return Refused(f"You have {mine} {_studies(mine)} queued or running; each visitor may run "
                       f"{settings.SIGHTLINE_STUDIES_PER_CLIENT} at a time. Cancel it or wait until it is done.",
                       status=429, retry_after=RETRY_AFTER_S)
    site = running.count()
    if site >= settings.SIGHTLINE_STUDIES_PER_SITE:
        return Refused(f"The site runs {site} studies, as many as it takes at a time. Try again later.",
                       status=429, retry_after=RETRY_AFTER_S)
    return None


def _studies(n: int) -> str:
    return "study" if n == 1 else "studies"
