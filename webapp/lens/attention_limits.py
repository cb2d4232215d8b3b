"""The attention maps' per-browser limit, beside the per-analysis one (``webapp.ondemand.limits``).

Anyone with a job's link can ask for any position's attention maps, and each new one is a forward
pass on a worker. A browser session may queue at most ``PER_SESSION_PER_WINDOW`` new computations
per ``SESSION_WINDOW_S`` (a client without cookies gets a new session each time, which the
per-analysis limit still holds). Maps already computed (or being computed) are served without
counting.
"""

from __future__ import annotations

import time

from django.http import HttpRequest

from webapp.ondemand.refused import Refused

PER_SESSION_PER_WINDOW = 60
SESSION_WINDOW_S = 60
SESSION_KEY = "attention_window"  # [window start (epoch seconds), computations queued in it]


def refuse_for_session(request: HttpRequest) -> Refused | None:
    """None (and the computation is counted) when this browser may queue one more."""
    now = time.time()
    start, count = request.session.get(SESSION_KEY) or (now, 0)
    if now - start >= SESSION_WINDOW_S:
        start, count = now, 0
    if count >= PER_SESSION_PER_WINDOW:
        wait = max(1, int(start + SESSION_WINDOW_S - now) + 1)
        return Refused(f"This browser has asked for {count} new attention maps in the last minute, the limit; "
                       f"try again in {wait} s.", status=429, retry_after=wait)
    request.session[SESSION_KEY] = [start, count + 1]
    return None
