"""Who asks: the key the fair-use limits (``webapp.ondemand.limits``) count a client's work under.

A signed-in user is one client wherever they ask from; otherwise the browser session the request
came with (only one it already had: a cookie-less client that got a new session on every request
would be a new client each time), else the remote address. The key is hashed with the site's
secret and kept short: it is stored on every row of on-demand work and says nothing by itself.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.http import HttpRequest

KEY_LENGTH = 16


def client_identity(request: HttpRequest) -> str:
    """The unhashed identity: ``user:<id>``, ``session:<key>`` or ``address:<ip>``."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    session = getattr(request, "session", None)
    if session is not None and session.session_key and session.exists(session.session_key):
        return f"session:{session.session_key}"
    return f"address:{request.META.get('REMOTE_ADDR', '')}"


def client_key(request: HttpRequest) -> str:
    """The short hashed key of the client asking."""
    digest = hashlib.sha256(f"{settings.SECRET_KEY}|{client_identity(request)}".encode()).hexdigest()
    return digest[:KEY_LENGTH]
