"""ASGI entry point: HTTP through Django, websockets through Channels.

``get_asgi_application()`` runs before consumers are imported, so the app
registry is ready. Static files are served here too when ``serve`` asks for it
(``SIGHTLINE_SERVE_STATIC=1``); production puts collectstatic output behind a web server.
Request bodies over their path's limit are refused before they are read (``webapp.site.body_limit``).
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from webapp.jobs.live.routing import websocket_urlpatterns  # noqa: E402
from webapp.studies.routing import websocket_urlpatterns as study_sockets  # noqa: E402
from webapp.site.body_limit import BodyLimitMiddleware  # noqa: E402

http_app = django_asgi_app
if settings.DEBUG or os.environ.get("SIGHTLINE_SERVE_STATIC") == "1":
    from webapp.site.static_serving import CachingStaticFilesHandler

    http_app = CachingStaticFilesHandler(django_asgi_app)

application = ProtocolTypeRouter({
    "http": BodyLimitMiddleware(http_app),  # refuses an oversized body before it is read
    # No AuthMiddlewareStack: the job socket serves anyone with the job's link, as the job page does,
    # and its session wrapper ran on every pushed message to every viewer.
    "websocket": AllowedHostsOriginValidator(URLRouter(study_sockets + websocket_urlpatterns)),
})
