from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from webapp.api import views

# A job's state and a position are the API's own; the jobs app describes the game page's reading
# endpoints, and the feature apps their endpoints on a position (the lens, the lc0 comparison), in
# their own api.py, routed here. The docs page is Swagger UI from drf-spectacular-sidecar's static files.
POSITION = "jobs/<str:job_id>/nodes/<int:node_id>/"

urlpatterns = [
    path("", views.ApiIndex.as_view(), name="api_index"),
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api_schema"), name="api_docs"),
    path("networks/", views.NetworkList.as_view(), name="api_networks"),
    path("jobs/", views.SubmitJob.as_view(), name="api_submit"),
    path("jobs/<str:job_id>/", views.JobState.as_view(), name="job_state"),
    path("jobs/<str:job_id>/", include("webapp.jobs.api_urls")),
    path(POSITION, views.PositionDetail.as_view(), name="api_position"),
    path(POSITION, include("webapp.lens.api_urls")),
    path(POSITION, include("webapp.lc0compare.api_urls")),
    path("", include("webapp.studies.api_urls")),
    path("", include("webapp.probes.api_urls")),
]
