"""REST API tokens: minted, used and revoked under audit (apps.accounts.models.ApiToken).

* Minted with a name, a scope (read only, or read and write) and a lifetime (at most
  ``LEXTRACE_API_TOKEN_MAX_DAYS``). The secret is returned once and only its SHA-256 is kept.
* A user who holds no role beyond staff may mint tokens for themselves; a token for a reviewer or
  an administrator is issued only by an administrator (they carry the power to decide and to
  manage the corpus).
* Using an expired or revoked token is refused, and the refusal is audited; so are minting and
  revoking. Unknown tokens are refused without an event (anyone can send one).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import ApiToken, Role, User
from apps.audit.services import audit_append

TOKEN_PREFIX = "lxt_"
PREFIX_CHARS = 12  # "lxt_" and 8 characters of the secret: enough to tell a user's tokens apart
NAME_MAX = 100
# How often a token's last use is written down: a busy client must not turn every read into a write.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)
PRIVILEGED_ROLES = (Role.REVIEWER, Role.ADMIN)


class TokenRefused(Exception):
    """The presented token cannot be used; ``reason`` is said to the client."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def privileged(user: User) -> bool:
    """Holds a role whose tokens only an administrator may issue."""
    return user.is_superuser or any(role in user.roles for role in PRIVILEGED_ROLES)


def lifetime_days_default() -> int:
    return settings.LEXTRACE_API_TOKEN_DAYS


def lifetime_days_max() -> int:
    return settings.LEXTRACE_API_TOKEN_MAX_DAYS


def may_mint(*, issuer: User, user: User) -> bool:
    if issuer.has_role(Role.ADMIN):
        return True
    return issuer.pk == user.pk and not privileged(user)


def _view(token: ApiToken) -> dict:
    return {"user": token.user_id, "name": token.name, "prefix": token.prefix, "scope": token.scope,
            "roles": list(token.roles), "expires_at": token.expires_at.isoformat()}


def api_token_mint(*, user: User, issuer: User, name: str, scope: str, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token for ``user``; returns it and its secret (shown once, never stored)."""
    if not may_mint(issuer=issuer, user=user):
        raise PermissionDenied(_("Tokens for reviewers and administrators are issued by an administrator."))
    name = " ".join((name or "").split())
    if not name:
        raise ValidationError({"name": _("Name the token (what it is for), so you can tell it apart later.")})
    if len(name) > NAME_MAX:
        raise ValidationError({"name": _("The name may have at most %(n)d characters.") % {"n": NAME_MAX}})
    if scope not in ApiToken.Scope.values:
        raise ValidationError({"scope": _("Choose read only, or read and write.")})
    days = lifetime_days_default() if days is None else days
    if not 1 <= days <= lifetime_days_max():
        raise ValidationError({"days": _("A token lasts from 1 to %(n)d days.") % {"n": lifetime_days_max()}})
    if not user.is_active:
        raise ValidationError(_("This account is deactivated."))
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name, prefix=secret[:PREFIX_CHARS], key_hash=_hash(secret),
                                        scope=scope, roles=sorted(user.roles), created_by=issuer,
                                        expires_at=timezone.now() + dt.timedelta(days=days))
        audit_append(action="api_token.mint", obj=token, actor=issuer, after=_view(token))
    return token, secret


def api_token_revoke(*, token: ApiToken, user: User) -> ApiToken:
    """Revoke a token at once (its owner, or an administrator)."""
    if token.user_id != user.pk and not user.has_role(Role.ADMIN):
        raise PermissionDenied(_("Only the token's owner or an administrator can revoke it."))
    with transaction.atomic():
        locked = ApiToken.objects.select_for_update().get(pk=token.pk)
        if locked.revoked_at is not None:
            raise ValidationError(_("This token was already revoked."))
        locked.revoked_at, locked.revoked_by = timezone.now(), user
        locked.save(update_fields=["revoked_at", "revoked_by"])
        audit_append(action="api_token.revoke", obj=locked, actor=user, before={"state": "active"},
                     after={**_view(locked), "state": "revoked"})
    return locked


def api_token_use(*, secret: str, request=None) -> ApiToken:
    """The token a request presents, checked; TokenRefused with the reason otherwise.

    An expired or revoked token is an audited refusal (it was a real credential: its use after
    the end is worth knowing about); an unknown one is refused without an event.
    """
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        raise TokenRefused(_("Invalid token."))
    token = ApiToken.objects.select_related("user").filter(key_hash=_hash(secret)).first()
    if token is None:
        raise TokenRefused(_("Invalid token."))
    now = timezone.now()
    state = token.state(now)
    if state != "active":
        with transaction.atomic():
            # No actor: whoever presented it is not authenticated; the token's user is named in after.
            audit_append(action="api_token.refused", obj=token, request=request,
                         after={"user": token.user_id, "prefix": token.prefix, "state": state}, reason=f"token {state}")
        raise TokenRefused(_("This token has expired.") if state == "expired" else _("This token was revoked."))
    user = token.user
    if not user.is_active:
        raise TokenRefused(_("This account is deactivated."))
    if set(user.roles) - set(token.roles):
        raise TokenRefused(_("Your roles changed since this token was issued; ask for a new token."))
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
