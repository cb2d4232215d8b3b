"""The game page's lc0 panel: what it offers for a job (``webapp.jobs.panels``)."""

from webapp.jobs.panels import register
from webapp.lc0compare.views import panel_settings

register("lc0", panel_settings)
