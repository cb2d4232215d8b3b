from django.urls import path

from webapp.lc0compare import views

urlpatterns = [
    path("jobs/<str:job_id>/nodes/<int:node_id>/lc0/", views.compare, name="job_lc0"),
]
