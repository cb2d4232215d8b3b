"""The studies' API routes, under ``/api/`` (``webapp.api.urls``)."""

from django.urls import path, re_path

from webapp.studies import api

urlpatterns = [
    path("studies/", api.SubmitStudy.as_view(), name="api_submit_study"),
    path("studies/<str:study_id>/", api.StudyDetail.as_view(), name="api_study"),
    path("studies/<str:study_id>/items/", api.StudyItemList.as_view(), name="api_study_items"),
    path("studies/<str:study_id>/cancel/", api.CancelStudy.as_view(), name="api_study_cancel"),
    re_path(r"^studies/(?P<study_id>[^/]+)/export\.(?P<kind>json|csv)$", api.StudyExport.as_view(),
            name="api_study_export"),
    re_path(r"^studies/(?P<study_id>[^/]+)/figures/(?P<name>[\w-]+)\.(?P<kind>png|svg)$", api.StudyFigure.as_view(),
            name="api_study_figure"),
]
