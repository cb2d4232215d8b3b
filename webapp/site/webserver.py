"""The command line of the web server process (``serve`` and the tests start it the same way).

uvicorn, not daphne: daphne (Twisted) receives a whole request body, and parses a multipart or
url-encoded one on its event loop, before the app is called, so one large POST stalled every
client and no ASGI-level limit could stop it. uvicorn streams the body to the app with flow
control, so ``webapp.site.body_limit`` can refuse it from the headers. Websockets: the
``websockets`` package; HTTP parsing: httptools; event loop: uvloop.
"""

from __future__ import annotations

import sys

# Seconds that open connections (websockets included) get to finish on SIGTERM.
GRACEFUL_SHUTDOWN_S = 5


def web_server_command(host: str, port: int) -> list[str]:
    from django.conf import settings

    return [
        sys.executable, "-m", "uvicorn", "webapp.asgi:application", "--host", host, "--port", str(port),
        "--lifespan", "off",  # Channels' router has no lifespan protocol
        "--ws", "websockets", "--http", "httptools", "--loop", "uvloop",
        # Pushed messages are ~100 bytes: deflating each frame for each viewer cost more CPU than
        # sending it (13% of the web process at 50 viewers x 50 messages/s) and saved little.
        "--ws-per-message-deflate", "false",
        # A websocket message larger than the site accepts closes the connection before it is buffered.
        "--ws-max-size", str(settings.SIGHTLINE_WS_MAX_WIRE_BYTES),
        "--no-access-log", "--timeout-graceful-shutdown", str(GRACEFUL_SHUTDOWN_S),
    ]
