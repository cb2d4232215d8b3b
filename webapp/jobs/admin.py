from django.contrib import admin

from webapp.jobs.models import AnalysisJob, AttentionMap, PositionResult


@admin.register(AnalysisJob)
class AnalysisJobAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "network", "search", "budget", "status", "evaluated", "searched",
                    "total_positions", "created_at"]
    list_filter = ["status", "search", "network"]
    readonly_fields = ["id", "created_at", "started_at", "finished_at", "task_id"]


@admin.register(PositionResult)
class PositionResultAdmin(admin.ModelAdmin):
    list_display = ["position_key", "network_checksum", "settings_key", "compute_ms", "created_at"]
    list_filter = ["settings_key"]


@admin.register(AttentionMap)
class AttentionMapAdmin(admin.ModelAdmin):
    list_display = ["position_key", "network_checksum", "status", "layers", "heads", "created_at"]
    exclude = ["data"]
