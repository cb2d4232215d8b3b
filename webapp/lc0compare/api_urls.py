"""The lc0 comparison's API route, under ``/api/jobs/<id>/nodes/<n>/`` (``webapp.api.urls``)."""

from django.urls import path

from webapp.lc0compare import api

urlpatterns = [
    path("lc0/", api.Lc0Compare.as_view(), name="api_lc0"),
]
