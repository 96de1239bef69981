from axes.admin import AccessAttemptAdmin as AxesAccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from apps.accounts.models import Role, Team, User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    fieldsets = BaseUserAdmin.fieldsets + (("Lextrace", {"fields": ("roles", "teams")}),)
    list_display = ("username", "email", "roles", "is_active")
    filter_horizontal = ("teams", "groups", "user_permissions")


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at")
    search_fields = ("name",)


class LoginLockAdmin(AxesAccessAttemptAdmin):
    """Failed-login records (django-axes). Lextrace administrators, not only superusers, may view
    them and delete one to lift a lockout; the release is audited (apps/accounts/signals.py)."""

    @staticmethod
    def _lextrace_admin(request) -> bool:
        # The admin site also lists apps on its login page, for anonymous users.
        return request.user.is_authenticated and request.user.has_role(Role.ADMIN)

    def has_module_permission(self, request):
        return self._lextrace_admin(request) or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return self._lextrace_admin(request) or super().has_view_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._lextrace_admin(request) or super().has_delete_permission(request, obj)


if admin.site.is_registered(AccessAttempt):
    admin.site.unregister(AccessAttempt)
admin.site.register(AccessAttempt, LoginLockAdmin)
