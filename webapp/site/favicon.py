"""/favicon.ico: browsers ask for it whatever a page's <link rel="icon"> says."""

from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.views.decorators.http import require_GET


@require_GET
def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """To the SVG icon among the static files (its URL is known only once static files are set up)."""
    return HttpResponsePermanentRedirect(static("sightline/favicon.svg"))
