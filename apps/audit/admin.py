from django.contrib import admin

from apps.accounts.models import Role
from apps.audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the trail is written only by audit_append, and the database refuses changes anyway."""

    list_display = ("seq", "at", "actor_username", "role", "action", "object_type", "object_id", "request_id")
    list_filter = ("action", "object_type")
    search_fields = ("object_id", "actor_username", "request_id")
    ordering = ("-seq",)
    readonly_fields = tuple(f.name for f in AuditEvent._meta.fields)
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    # Lextrace administrators (the role, not only Django superusers) may read it too.
    def has_view_permission(self, request, obj=None):
        return _lextrace_admin(request.user) or super().has_view_permission(request, obj)

    def has_module_permission(self, request):
        return _lextrace_admin(request.user) or super().has_module_permission(request)


def _lextrace_admin(user) -> bool:
    return user.is_authenticated and user.has_role(Role.ADMIN)
