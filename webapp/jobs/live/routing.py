from django.urls import path, re_path

from webapp.jobs.live.consumers import JobConsumer, NoRouteConsumer

websocket_urlpatterns = [
    path("ws/jobs/<str:job_id>/", JobConsumer.as_asgi()),
    re_path(r"", NoRouteConsumer.as_asgi()),
]
