"""Every API error is ``{"error": message}`` with a 4xx status, as the site's other JSON endpoints."""

from __future__ import annotations

from django.http import Http404
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    """DRF's handler, with its ``detail`` renamed ``error`` (and a view's own 404 message kept)."""
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(exc, Http404) and exc.args and isinstance(exc.args[0], str):
        data = {"detail": exc.args[0]}
    if isinstance(data, dict) and "detail" in data:
        response.data = {"error": str(data["detail"]), **{k: v for k, v in data.items() if k != "detail"}}
    elif isinstance(data, dict):
        response.data = {"error": "The request is not valid.", "errors": data}
    else:
        response.data = {"error": " ".join(map(str, data))}
    return response
