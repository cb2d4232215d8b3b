from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from webapp.api import views

# A job's state and a position are the API's own; the feature apps describe their endpoints on a
# position (the lens, the lc0 comparison) in their own api.py and route them here.
POSITION = "jobs/<str:job_id>/nodes/<int:node_id>/"

urlpatterns = [
    path("", views.ApiIndex.as_view(), name="api_index"),
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("networks/", views.NetworkList.as_view(), name="api_networks"),
    path("jobs/", views.SubmitJob.as_view(), name="api_submit"),
    path("jobs/<str:job_id>/", views.JobState.as_view(), name="job_state"),
    path(POSITION, views.PositionDetail.as_view(), name="api_position"),
    path(POSITION, include("webapp.lens.api_urls")),
    path(POSITION, include("webapp.lc0compare.api_urls")),
]
