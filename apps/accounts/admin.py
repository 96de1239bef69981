from axes.admin import AccessAttemptAdmin as AxesAccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from apps.accounts.models import ApiToken, Role, Team, User


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


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Every user's API tokens, read-only; revoking goes through the audited service. Tokens are
    issued at /cases/api-token/ (an administrator may issue one for any user there)."""

    list_display = ("name", "user", "prefix", "scope", "created_at", "expires_at", "last_used_at", "revoked_at")
    list_filter = ("scope",)
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = [f.name for f in ApiToken._meta.fields if f.name != "key_hash"]
    exclude = ("key_hash",)
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        from django.core.exceptions import ValidationError

        from apps.cases.services.api_tokens import api_token_revoke

        done = 0
        for token in queryset.filter(revoked_at__isnull=True):
            try:
                api_token_revoke(token=token, user=request.user)
                done += 1
            except ValidationError:
                pass
        self.message_user(request, f"{done} token(s) revoked.")
