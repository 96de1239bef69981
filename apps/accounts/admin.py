"""The Django admin for Lextrace administrators: users (roles, teams), teams (members), login locks.

The admin role is what opens these pages, not Django's per-model permissions (which Lextrace
does not hand out): without this, every page but the index answered 403 to ``admin``, who is
``is_staff`` but holds no model permission. Superuser-only powers (superuser status, Django groups
and permissions) stay hidden from non-superusers. Every change is audited (apps/accounts/services.py).
"""

from axes.admin import AccessAttemptAdmin as AxesAccessAttemptAdmin
from axes.models import AccessAttempt
from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from apps.accounts.models import ApiToken, Role, Team, User
from apps.accounts.services import (
    account_audit,
    admin_change_check,
    team_snapshot,
    user_roles_apply,
    user_snapshot,
)

_BEFORE = "_lextrace_admin_before"


def _lextrace_admin(request) -> bool:
    # The admin site also lists apps on its login page, for anonymous users.
    return request.user.is_authenticated and request.user.has_role(Role.ADMIN)


class LextraceAdminAccess:
    """Model admin pages open to users holding the Lextrace admin role."""

    def has_module_permission(self, request):
        return _lextrace_admin(request) or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return _lextrace_admin(request) or super().has_view_permission(request, obj)

    def has_add_permission(self, request):
        return _lextrace_admin(request) or super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        return _lextrace_admin(request) or super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return _lextrace_admin(request) or super().has_delete_permission(request, obj)


class UserChangeForm(BaseUserAdmin.form):
    roles = forms.MultipleChoiceField(label=_("Roles"), choices=Role.choices, required=False,
                                      widget=forms.CheckboxSelectMultiple)

    def clean(self):
        data = super().clean()
        actor = getattr(self, "actor", None)
        if actor is not None and self.instance.pk:
            try:
                admin_change_check(actor=actor, user=self.instance, roles=list(data.get("roles") or []),
                                   is_active=bool(data.get("is_active", True)))
            except ValidationError as exc:
                self.add_error(None, exc)
        return data


@admin.register(User)
class UserAdmin(LextraceAdminAccess, BaseUserAdmin):
    form = UserChangeForm
    list_display = ("username", "get_full_name", "role_list", "team_list", "is_active", "last_login")
    list_filter = ("is_active", "teams")
    filter_horizontal = ("teams", "groups", "user_permissions")
    _LEXTRACE = (_("Lextrace access"), {"fields": ("roles", "teams")})

    @admin.display(description=_("roles"))
    def role_list(self, obj):
        return ", ".join(str(label) for label in obj.role_labels)

    @admin.display(description=_("teams"))
    def team_list(self, obj):
        return ", ".join(t.name for t in obj.teams.all())

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("teams")

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.pk == request.user.pk:
            return False  # nobody deletes their own account (an administrator could lock everyone out)
        return super().has_delete_permission(request, obj)

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return super().get_fieldsets(request, obj)
        if request.user.is_superuser:
            return (*BaseUserAdmin.fieldsets, self._LEXTRACE)
        # Superuser status, groups and model permissions stay with superusers.
        return ((None, {"fields": ("username", "password")}),
                (_("Personal info"), {"fields": ("first_name", "last_name", "email")}),
                self._LEXTRACE, (_("Status"), {"fields": ("is_active",)}),
                (_("Important dates"), {"fields": ("last_login", "date_joined")}))

    def get_readonly_fields(self, request, obj=None):
        return ("last_login", "date_joined")

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.actor = request.user
        return form

    def save_model(self, request, obj, form, change):
        setattr(request, _BEFORE, user_snapshot(User.objects.get(pk=obj.pk)) if change else None)
        user_roles_apply(obj)
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        user = form.instance
        account_audit(action="accounts.user_update" if change else "accounts.user_create", obj=user,
                      before=getattr(request, _BEFORE, None), after=user_snapshot(user), actor=request.user)

    def delete_model(self, request, obj):
        before, pk = user_snapshot(obj), obj.pk
        super().delete_model(request, obj)
        account_audit(action="accounts.user_delete", obj=obj, before=before, after=None, actor=request.user,
                      object_id=pk)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            for user in queryset:
                self.delete_model(request, user)

    def user_change_password(self, request, id, form_url=""):
        with transaction.atomic():
            response = super().user_change_password(request, id, form_url)
            if request.method == "POST" and response.status_code == 302:
                user = User.objects.get(pk=id)
                account_audit(action="accounts.password_set", obj=user, before=None,
                              after={"username": user.username}, actor=request.user)
        return response


class TeamForm(forms.ModelForm):
    members = forms.ModelMultipleChoiceField(label=_("Members"), queryset=User.objects.order_by("username"),
                                             required=False, widget=admin.widgets.FilteredSelectMultiple(_("members"), False))

    class Meta:
        model = Team
        fields = ["name"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["members"].initial = self.instance.members.all()


@admin.register(Team)
class TeamAdmin(LextraceAdminAccess, admin.ModelAdmin):
    form = TeamForm
    list_display = ("name", "member_count", "created_at")
    search_fields = ("name",)

    @admin.display(description=_("members"))
    def member_count(self, obj):
        return obj.members.count()

    def save_model(self, request, obj, form, change):
        setattr(request, _BEFORE, team_snapshot(Team.objects.get(pk=obj.pk)) if change else None)
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        team = form.instance
        team.members.set(form.cleaned_data["members"])
        account_audit(action="accounts.team_update" if change else "accounts.team_create", obj=team,
                      before=getattr(request, _BEFORE, None), after=team_snapshot(team), actor=request.user)

    def delete_model(self, request, obj):
        before, pk = team_snapshot(obj), obj.pk
        super().delete_model(request, obj)
        account_audit(action="accounts.team_delete", obj=obj, before=before, after=None, actor=request.user,
                      object_id=pk)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            for team in queryset:
                self.delete_model(request, team)


class LoginLockAdmin(AxesAccessAttemptAdmin):
    """Failed-login records (django-axes). Lextrace administrators, not only superusers, may view
    them and delete one to lift a lockout; the release is audited (apps/accounts/signals.py)."""

    def has_module_permission(self, request):
        return _lextrace_admin(request) or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return _lextrace_admin(request) or super().has_view_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return _lextrace_admin(request) or super().has_delete_permission(request, obj)


if admin.site.is_registered(AccessAttempt):
    admin.site.unregister(AccessAttempt)
admin.site.register(AccessAttempt, LoginLockAdmin)


@admin.register(ApiToken)
class ApiTokenAdmin(LextraceAdminAccess, admin.ModelAdmin):
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

    @admin.action(description=_("Revoke the selected tokens"))
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
