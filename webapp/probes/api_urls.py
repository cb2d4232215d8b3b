"""The probes' API routes, under ``/api/`` (``webapp.api.urls``)."""

from django.urls import path

from webapp.probes import api

urlpatterns = [
    path("networks/<slug:name>/concepts/", api.ConceptAtlasView.as_view(), name="api_concepts"),
    path("networks/<slug:name>/concepts/position/", api.PositionConcepts.as_view(), name="api_position_concepts"),
]
