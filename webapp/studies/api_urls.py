"""The studies' API routes, under ``/api/`` (``webapp.api.urls``)."""

from django.urls import path

from webapp.studies import api

urlpatterns = [
    path("studies/", api.SubmitStudy.as_view(), name="api_submit_study"),
    path("studies/<str:study_id>/", api.StudyDetail.as_view(), name="api_study"),
    path("studies/<str:study_id>/items/", api.StudyItemList.as_view(), name="api_study_items"),
    path("studies/<str:study_id>/cancel/", api.CancelStudy.as_view(), name="api_study_cancel"),
    path("studies/<str:study_id>/export.<str:kind>", api.StudyExport.as_view(), name="api_study_export"),
    path("studies/<str:study_id>/figures/<str:name>.<str:kind>", api.StudyFigure.as_view(), name="api_study_figure"),
]
