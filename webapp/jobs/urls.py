from django.urls import path

from webapp.jobs import explore, fork, sharing, views

urlpatterns = [
    path("", views.home, name="home"),
    path("recent/", views.recent, name="recent"),
    path("estimate/", views.cost_estimate, name="cost_estimate"),
    path("jobs/<str:job_id>/", views.job_page, name="job"),
    path("jobs/<str:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("jobs/<str:job_id>/review/", views.job_review, name="job_review"),
    path("jobs/<str:job_id>/wait/", views.job_wait, name="job_wait"),
    path("jobs/<str:job_id>/moves/", views.job_moves, name="job_moves"),
    path("jobs/<str:job_id>/deeper/", views.job_deeper, name="job_deeper"),
    path("jobs/<str:job_id>/deeper/<int:deep_id>/stop/", views.job_deeper_stop, name="job_deeper_stop"),
    path("jobs/<str:job_id>/engine/", views.job_engine_deeper, name="job_engine_deeper"),
    path("jobs/<str:job_id>/engine/<int:deep_id>/stop/", views.job_engine_deeper_stop, name="job_engine_deeper_stop"),
    path("jobs/<str:job_id>/share/", sharing.share, name="job_share"),
    path("jobs/<str:job_id>/fork/", fork.fork, name="job_fork"),
    path("jobs/<str:job_id>/export.pgn", sharing.pgn_export, name="job_pgn"),
    path("jobs/<str:job_id>/nodes/<int:node_id>/board.svg", sharing.board_picture, name="board_svg"),
    # The jump from a head atlas cell: it starts an analysis, so it is the jobs app's.
    path("networks/<slug:name>/heads/explore/", explore.explore_head, name="head_explore"),
]
