from django.db import transaction

from apps.accounts.models import Role, Team, User
from apps.audit.services import audit_append


@transaction.atomic
def user_create(*, username: str, password: str, roles: list[str], teams: list[Team] = (), actor=None,
                **fields) -> User:
    unknown = set(roles) - set(Role.values)
    if unknown:
        raise ValueError(f"unknown roles: {sorted(unknown)}")
    user = User(username=username, roles=list(roles), **fields)
    # Admins manage the corpus through Django's admin site.
    user.is_staff = Role.ADMIN in roles
    user.set_password(password)
    user.save()
    user.teams.set(teams)
    # Who may do what is part of the trail: the roles and teams a new account starts with.
    audit_append(action="accounts.user_create", obj=user, actor=actor,
                 after={"username": user.username, "roles": sorted(user.roles), "teams": sorted(t.pk for t in teams)})
    return user


def client_ip(request) -> str:
    """The client's address: the peer, or, when the peer is a trusted proxy (TRUSTED_PROXIES), the
    last X-Forwarded-For entry that is not itself a trusted proxy.

    A client can put anything in X-Forwarded-For; only the entries our own proxies appended are
    believed, so a spoofed header from an untrusted peer changes nothing.
    """
    from django.conf import settings

    peer = request.META.get("REMOTE_ADDR", "")
    trusted = set(getattr(settings, "TRUSTED_PROXIES", ()))
    if peer not in trusted:
        return peer
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    for hop in reversed(hops):
        if hop not in trusted:
            return hop
    return peer


# --- administration (users, teams, roles, memberships), audited ---------------------------------


def user_snapshot(user: User) -> dict:
    """What the audit trail keeps of an account: never the password or its hash."""
    return {"username": user.username, "roles": sorted(user.roles), "teams": sorted(user.teams.values_list("pk", flat=True)),
            "is_active": user.is_active, "is_staff": user.is_staff, "is_superuser": user.is_superuser}


def team_snapshot(team: Team) -> dict:
    return {"name": team.name, "members": sorted(team.members.values_list("pk", flat=True))}


def admin_change_check(*, actor: User, user: User, roles: list[str], is_active: bool) -> None:
    """An administrator may not take their own administration away (nobody would be left to give it back)."""
    from django.core.exceptions import ValidationError
    from django.utils.translation import gettext as _

    if user.pk == actor.pk and (Role.ADMIN not in roles or not is_active):
        raise ValidationError(_("You cannot remove your own administrator role or deactivate your own account; "
                                "ask another administrator."))


def user_roles_apply(user: User) -> None:
    """The Django admin site is open to Lextrace administrators: ``is_staff`` follows the admin role."""
    user.is_staff = Role.ADMIN in user.roles or user.is_superuser


def account_audit(*, action: str, obj, before: dict | None, after: dict | None, actor: User,
                  object_id: int | None = None) -> None:
    """One audit event for an administrative change (inside the change's transaction). A deleted
    object has no pk any more: its former ``object_id`` is given."""
    from apps.audit.services import audit_append

    if before is not None and before == after:
        return
    if object_id is None:
        audit_append(action=action, obj=obj, actor=actor, before=before, after=after)
    else:
        audit_append(action=action, object_type=f"{obj._meta.app_label}.{obj._meta.model_name}", object_id=object_id,
                     actor=actor, before=before, after=after)
