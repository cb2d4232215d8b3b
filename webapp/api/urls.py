from django.urls import path

from webapp.analyses import views as analyses_views
from webapp.api import views

# Reading a job and an attention layer are the game page's own endpoints (plain Django views).
urlpatterns = [
    path("jobs/", views.SubmitJob.as_view(), name="api_submit"),
    path("jobs/<str:job_id>/", analyses_views.job_state, name="job_state"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/", views.PositionDetail.as_view(), name="api_position"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/attention/", analyses_views.attention, name="attention"),
]
