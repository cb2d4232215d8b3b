from django.urls import path, re_path

from webapp.studies import views

urlpatterns = [
    path("", views.index, name="studies"),
    path("<str:study_id>/", views.study_page, name="study"),
    path("<str:study_id>/state/", views.study_state, name="study_state"),
    path("<str:study_id>/cancel/", views.study_cancel, name="study_cancel"),
    re_path(r"^(?P<study_id>[^/]+)/export\.(?P<kind>json|csv)$", views.study_export, name="study_export"),
    re_path(r"^(?P<study_id>[^/]+)/figures/(?P<name>[\w-]+)\.(?P<kind>png|svg)$", views.study_figure,
            name="study_figure"),
]
