"""Studies in the admin: a read-only list (what ran, on which network, where it stands). A study is
changed only by its worker and its owner's cancel, so the admin adds and edits nothing."""

from django.contrib import admin

from webapp.studies.models import Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["id", "method", "network", "status", "done", "total", "created_at", "finished_at"]
    list_filter = ["status", "method"]
    search_fields = ["id", "network__name", "method"]
    list_select_related = ["network"]
    exclude = ["source_text", "positions", "result"]  # whole position sets and results: the study's page shows them

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
