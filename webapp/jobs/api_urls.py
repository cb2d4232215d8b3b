"""The game page's reading endpoints in the API, under ``/api/jobs/<id>/`` (``webapp.api.urls``)."""

from django.urls import path

from webapp.jobs import api

urlpatterns = [
    path("review/", api.JobReview.as_view(), name="api_job_review"),
    path("export.pgn", api.PgnExport.as_view(), name="api_job_pgn"),
    path("nodes/<int:node_id>/board.svg", api.BoardPicture.as_view(), name="api_board_svg"),
]
