"""ASGI middleware: refuse a request body over its path's limit before reading it.

Django checks ``DATA_UPLOAD_MAX_MEMORY_SIZE`` only once its ASGI handler has received the
whole body, so a 200 MB anonymous POST was read in full before anyone said no. This layer
answers 413 from the ``Content-Length`` header alone, and counts the bytes of a body of
unknown length (chunked), stopping at the limit. The server must stream bodies to the app
(uvicorn does; daphne buffers and parses the whole body first, see docs/site.md).
A path's larger limit may be kept for users with a permission (the admin's checkpoint upload):
anyone else is refused from the headers and the session cookie, before the body is read.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class BodyLimit:
    """At most ``max_bytes`` of body on paths matching ``path_pattern``; ``what`` explains it to a person.

    With ``permission`` (``"app_label.codename"``) the limit is only for a signed-in, active staff
    user who has it; anyone else gets the default limit, decided from the session cookie before
    any of the body is read (the admin's own 403 came only after a 2 GiB body was received)."""

    path_pattern: str
    max_bytes: int
    what: str
    permission: str | None = None

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
        title = {413: "Request too large", 403: "Not allowed"}.get(status, "Bad request")
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


def not_permitted_message(default: BodyLimit, size: int) -> str:
    return (f"The request body is {size:,} bytes; only a signed-in staff user who may upload networks can send "
            f"more than {default.max_bytes:,} bytes here. Sign in at /admin/ first.")


async def user_has_permission(scope: dict, permission: str) -> bool:
    """Whether the session cookie in ``scope`` belongs to an active staff user with ``permission``."""
    from channels.db import database_sync_to_async

    cookies = b"; ".join(value for name, value in scope.get("headers", ()) if name.lower() == b"cookie")
    if not cookies:
        return False
    return await database_sync_to_async(_session_user_has_permission)(cookies.decode("latin-1"), permission)


def _session_user_has_permission(cookie_header: str, permission: str) -> bool:
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import get_user
    from django.db import DatabaseError
    from django.http import HttpRequest
    from django.http.cookie import parse_cookie

    session_key = parse_cookie(cookie_header).get(settings.SESSION_COOKIE_NAME)
    if not session_key:
        return False
    request = HttpRequest()
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    try:
        user = get_user(request)  # checks the session's hash as the auth middleware does
        return user.is_active and user.is_staff and user.has_perm(permission)
    except DatabaseError:  # no answer about the user: no large body
        return False


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
        default = self.limits.default
        if limit.permission and (length is None or length > default.max_bytes) \
                and not await user_has_permission(scope, limit.permission):
            if length is not None:
                return await self._refuse(send, scope["path"], 403, not_permitted_message(default, length))
            limit = default  # a body of unknown length: counted against everyone's limit
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
