"""The site's routes: one include per app, each app's own ``urls.py``."""

from django.contrib import admin
from django.urls import include, path

from webapp.site.favicon import favicon

urlpatterns = [
    path("", include("webapp.jobs.urls")),
    path("", include("webapp.lc0compare.urls")),
    path("networks/", include("webapp.networks.urls")),
    path("networks/", include("webapp.probes.urls")),
    path("studies/", include("webapp.studies.urls")),
    path("api/", include("webapp.api.urls")),
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
]

handler400 = "webapp.jobs.views.bad_request"
handler404 = "webapp.jobs.views.not_found"
