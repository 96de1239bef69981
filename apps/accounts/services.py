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
