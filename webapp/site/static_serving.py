"""Static files for ``manage.py serve``: Django's finder-based handler plus a cache lifetime.

Without one, every game page fetched plotly.min.js (4.8 MB) again while its
analysis was starting. Production serves collectstatic output from a web server.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404

# Short enough that an upgraded site is picked up soon; DEBUG always revalidates.
MAX_AGE = 600


class CachingStaticFilesHandler(ASGIStaticFilesHandler):
    def serve(self, request):
        try:
            response = super().serve(request)
        except SuspiciousFileOperation:
            # "/static/../settings.py": the finders refuse it; Django's handler only turns Http404 into a page.
            raise Http404("No such static file.") from None
        if response.status_code == 200:
            response["Cache-Control"] = "no-cache" if settings.DEBUG else f"public, max-age={MAX_AGE}"
        return response
