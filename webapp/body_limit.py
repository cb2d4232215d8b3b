"""ASGI middleware: refuse a request body over its path's limit before reading it.

Django checks ``DATA_UPLOAD_MAX_MEMORY_SIZE`` only once its ASGI handler has received the
whole body, so a 200 MB anonymous POST was read in full before anyone said no. This layer
answers 413 from the ``Content-Length`` header alone, and counts the bytes of a body of
unknown length (chunked), stopping at the limit. The server must stream bodies to the app
(uvicorn does; daphne buffers and parses the whole body first, see README "The site").
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class BodyLimit:
    """At most ``max_bytes`` of body on paths matching ``path_pattern``; ``what`` explains it to a person."""

    path_pattern: str
    max_bytes: int
    what: str

    def matches(self, path: str) -> bool:
        return re.fullmatch(self.path_pattern, path) is not None


@dataclass(frozen=True)
class BodyLimits:
    """The first matching path limit, else ``default``."""

    default: BodyLimit
    by_path: tuple[BodyLimit, ...] = ()

    def for_path(self, path: str) -> BodyLimit:
        return next((limit for limit in self.by_path if limit.matches(path)), self.default)

    @classmethod
    def from_settings(cls) -> BodyLimits:
        from django.conf import settings

        return cls(default=settings.SIGHTLINE_BODY_LIMIT, by_path=tuple(settings.SIGHTLINE_BODY_LIMITS_BY_PATH))


def declared_length(scope: dict) -> int | None:
    """The Content-Length header as an int; None when absent; -1 when not a number."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else -1
    return None


def refusal(path: str, status: int, message: str) -> tuple[dict, dict]:
    """The response start and body: JSON under /api/, else a small HTML page; the connection closes."""
    if path.startswith("/api/"):
        body, content_type = json.dumps({"error": message}).encode(), b"application/json"
    else:
        title = "Request too large" if status == 413 else "Bad request"
        body = (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>"
                f"<body><h1>{title}</h1><p>{html.escape(message)}</p><p><a href=\"/\">Back to Sightline</a></p>"
                f"</body></html>").encode()
        content_type = b"text/html; charset=utf-8"
    start = {"type": "http.response.start", "status": status, "headers": [
        (b"content-type", content_type), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]}
    return start, {"type": "http.response.body", "body": body}


def too_large_message(limit: BodyLimit, size: int | None) -> str:
    told = f"The request body is {size:,} bytes" if size is not None else "The request body is larger than the limit"
    return f"{told}; the limit here is {limit.max_bytes:,} bytes ({limit.what})."


class BodyLimitMiddleware:
    """Wraps an ASGI app; only ``http`` scopes are checked."""

    def __init__(self, app, limits: BodyLimits | None = None):
        self.app = app
        self._limits = limits

    @property
    def limits(self) -> BodyLimits:
        if self._limits is None:
            self._limits = BodyLimits.from_settings()
        return self._limits

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.limits.for_path(scope["path"])
        length = declared_length(scope)
        if length == -1:
            return await self._refuse(send, scope["path"], 400, "The Content-Length header is not a number.")
        if length is not None and length > limit.max_bytes:
            return await self._refuse(send, scope["path"], 413, too_large_message(limit, length))
        await self._run_counted(scope, receive, send, limit)

    async def _run_counted(self, scope, receive, send, limit: BodyLimit) -> None:
        """Runs the app on a receive that stops at the limit: past it the app sees a disconnect
        (Django then gives up on the request) and the client gets the 413 here."""
        received = 0
        over = False
        started = False

        async def counted_receive():
            nonlocal received, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit.max_bytes:
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def tracked_send(message):
            nonlocal started
            if over:
                return  # the 413 below answers instead
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted_receive, tracked_send)
        if over and not started:
            await self._refuse(send, scope["path"], 413, too_large_message(limit, None))

    @staticmethod
    async def _refuse(send, path: str, status: int, message: str) -> None:
        start, body = refusal(path, status, message)
        await send(start)
        await send(body)
