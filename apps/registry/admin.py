from django.contrib import admin

from apps.registry.models import ModelVersion


@admin.register(ModelVersion)
class ModelVersionAdmin(admin.ModelAdmin):
    list_display = ("kind", "model_id", "active", "created_at")
    list_filter = ("kind", "active")
    readonly_fields = [f.name for f in ModelVersion._meta.fields]
