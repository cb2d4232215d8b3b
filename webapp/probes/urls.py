from django.urls import path

from webapp.probes import views

urlpatterns = [
    path("<slug:name>/concepts/", views.concepts_page, name="concepts"),
    path("<slug:name>/concepts/compute/", views.compute, name="concepts_compute"),
]
