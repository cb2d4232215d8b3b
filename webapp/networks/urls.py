from django.urls import path

from webapp.networks import heads_views, views

urlpatterns = [
    path("", views.network_list, name="networks"),
    path("<slug:name>/", views.network_panel, name="network"),
    path("<slug:name>/weights", views.network_weights, name="network_weights"),
    path("<slug:name>/heads/", heads_views.atlas_page, name="head_atlas"),
    path("<slug:name>/heads/compute/", heads_views.compute_atlas, name="head_compute"),
    path("<slug:name>/heads/show/", heads_views.show_head, name="head_show"),
]
