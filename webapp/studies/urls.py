from django.urls import path

from webapp.studies import views

urlpatterns = [
    path("", views.index, name="studies"),
    path("<str:study_id>/", views.study_page, name="study"),
    path("<str:study_id>/state/", views.study_state, name="study_state"),
    path("<str:study_id>/cancel/", views.study_cancel, name="study_cancel"),
    path("<str:study_id>/export.<str:kind>", views.study_export, name="study_export"),
    path("<str:study_id>/figures/<str:name>.<str:kind>", views.study_figure, name="study_figure"),
]
