from django.urls import path

from webapp.studies.consumers import StudyConsumer

websocket_urlpatterns = [
    path("ws/studies/<str:study_id>/", StudyConsumer.as_asgi()),
]
