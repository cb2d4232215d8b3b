from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from webapp.api import views

# Reading a job and an attention layer are the game page's own endpoints (Django views in
# webapp.analyses), wrapped here so that the schema describes them.
urlpatterns = [
    path("", views.ApiIndex.as_view(), name="api_index"),
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("networks/", views.NetworkList.as_view(), name="api_networks"),
    path("jobs/", views.SubmitJob.as_view(), name="api_submit"),
    path("jobs/<str:job_id>/", views.JobState.as_view(), name="job_state"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/", views.PositionDetail.as_view(), name="api_position"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/attention/", views.Attention.as_view(), name="attention"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lc0/", views.Lc0Compare.as_view(), name="api_lc0"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/", views.LensAbout.as_view(), name="lens_about"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/logit/", views.LogitLens.as_view(), name="lens_logit"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/ablate/", views.LensAblate.as_view(), name="lens_ablate"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/grid/", views.LensGrid.as_view(), name="lens_grid"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/split/", views.LensSplit.as_view(), name="lens_split"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/neurons/", views.LensNeurons.as_view(), name="lens_neurons"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/neuron/", views.LensNeuron.as_view(), name="lens_neuron"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/carriers/", views.LensCarriers.as_view(), name="lens_carriers"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lens/where-else/", views.LensWhereElse.as_view(),
         name="lens_where_else"),
]
