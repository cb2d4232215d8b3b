"""The one refusal: a request the site will not take, in a user's words, with its HTTP answer."""

from __future__ import annotations

import re

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from workers.dispatch import BrokerUnavailable


HEADINGS = {404: "Not found", 409: "Not now", 413: "Too large", 429: "Too many requests", 503: "Unavailable"}


class Refused(Exception):
    """``message`` for the user; ``status`` the HTTP answer (400 unless said); ``retry_after`` the
    seconds to wait before asking again (a 429 or 503), sent as ``Retry-After``; ``extra`` more keys
    of the JSON answer (a retry link, what was unavailable)."""

    def __init__(self, message: str, status: int = 400, retry_after: int | None = None, **extra):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.extra = extra

    @classmethod
    def broker_down(cls, exc: BrokerUnavailable, what: str) -> "Refused":
        """503: the workers' queue (Redis) is down and ``what`` was not started."""
        return cls(exc.message(what), status=503, retry_after=exc.retry_after_s)

    def json(self) -> JsonResponse:
        return self._with_retry(JsonResponse({"error": self.message, **self.extra}, status=self.status))

    def html(self, request: HttpRequest) -> HttpResponse:
        """The site's error page with the message (for a page, not an API call)."""
        heading = HEADINGS.get(self.status, "Not possible")
        return self._with_retry(render(request, "refused.html", {"heading": heading, "message": self.message},
                                       status=self.status))

    def text(self) -> HttpResponse:
        """Plain text (for a form's POST answered outside a page)."""
        return self._with_retry(HttpResponse(self.message, status=self.status,
                                             content_type="text/plain; charset=utf-8"))

    def _with_retry(self, response: HttpResponse) -> HttpResponse:
        if self.retry_after is not None:
            response["Retry-After"] = str(self.retry_after)
        return response


# A sentence that opens on a square or a move keeps it as written: "g5f7", "e4", "exd5", "e8=Q".
OPENS_ON_A_MOVE = re.compile(r"[a-h](?:x?[a-h])?[1-8]")


def sentence(text: str) -> str:
    """A library message as a sentence: capital first letter (unless it is a move's or a square's),
    full stop."""
    first = text[:1] if OPENS_ON_A_MOVE.match(text) else text[:1].upper()
    return first + text[1:] + ("" if text.endswith(".") else ".")
