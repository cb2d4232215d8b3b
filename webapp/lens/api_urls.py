"""The lens's API routes, under ``/api/jobs/<id>/nodes/<n>/`` (``webapp.api.urls``)."""

from django.urls import path

from webapp.lens import api

urlpatterns = [
    path("attention/", api.Attention.as_view(), name="attention"),
    path("lens/", api.LensAbout.as_view(), name="lens_about"),
    path("lens/logit/", api.LogitLens.as_view(), name="lens_logit"),
    path("lens/ablate/", api.LensAblate.as_view(), name="lens_ablate"),
    path("lens/grid/", api.LensGrid.as_view(), name="lens_grid"),
    path("lens/split/", api.LensSplit.as_view(), name="lens_split"),
    path("lens/neurons/", api.LensNeurons.as_view(), name="lens_neurons"),
    path("lens/neuron/", api.LensNeuron.as_view(), name="lens_neuron"),
    path("lens/carriers/", api.LensCarriers.as_view(), name="lens_carriers"),
    path("lens/where-else/", api.LensWhereElse.as_view(), name="lens_where_else"),
]
