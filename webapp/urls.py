from django.contrib import admin
from django.urls import include, path

from webapp.analyses import explore, fork, lc0_requests, sharing, views
from webapp.favicon import favicon
from webapp.networks import heads_views
from webapp.networks import views as network_views

urlpatterns = [
    path("", views.home, name="home"),
    path("recent/", views.recent, name="recent"),
    path("estimate/", views.cost_estimate, name="cost_estimate"),
    path("jobs/<str:job_id>/", views.job_page, name="job"),
    path("jobs/<str:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("jobs/<str:job_id>/review/", views.job_review, name="job_review"),
    path("jobs/<str:job_id>/moves/", views.job_moves, name="job_moves"),
    path("jobs/<str:job_id>/deeper/", views.job_deeper, name="job_deeper"),
    path("jobs/<str:job_id>/deeper/<int:deep_id>/stop/", views.job_deeper_stop, name="job_deeper_stop"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/lc0/", lc0_requests.compare, name="job_lc0"),
    path("jobs/<str:job_id>/share/", sharing.share, name="job_share"),
    path("jobs/<str:job_id>/fork/", fork.fork, name="job_fork"),
    path("jobs/<str:job_id>/export.pgn", sharing.pgn_export, name="job_pgn"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/board.svg", sharing.board_picture, name="board_svg"),
    path("api/", include("webapp.api.urls")),
    path("networks/", network_views.network_list, name="networks"),
    path("networks/<slug:name>/", network_views.network_panel, name="network"),
    path("networks/<slug:name>/weights", network_views.network_weights, name="network_weights"),
    path("networks/<slug:name>/heads/", heads_views.atlas_page, name="head_atlas"),
    path("networks/<slug:name>/heads/compute/", heads_views.compute_atlas, name="head_compute"),
    path("networks/<slug:name>/heads/explore/", explore.explore_head, name="head_explore"),
    path("networks/<slug:name>/heads/show/", heads_views.show_head, name="head_show"),
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
]

handler400 = "webapp.analyses.views.bad_request"
handler404 = "webapp.analyses.views.not_found"
