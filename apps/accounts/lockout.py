"""The per-address login lockout, beside django-axes' per-(username, address) one.

Axes locks one username from one address after LEXTRACE_LOGIN_FAILURE_LIMIT failures; an attacker
trying many usernames from one address is not stopped by that. This counts every failed login of
an address (in Redis, for the cool-off time, LEXTRACE_LOGIN_COOLOFF_HOURS) and, past
LEXTRACE_LOGIN_IP_FAILURE_LIMIT, refuses every login from it until the count expires or an
administrator lifts it (``manage.py login_ip_unlock``). The lock and its release are audited. The
limit is higher than axes' because many people can share one office address.

Without Redis the count is skipped (logged): refusing every login because the cache is down
would lock everybody out.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import transaction

from apps.audit.services import audit_append

logger = logging.getLogger(__name__)


def _key(ip: str) -> str:
    return f"login-ip-failures:{ip}"


def _window_s() -> int:
    return max(60, int(settings.AXES_COOLOFF_TIME * 3600))


def ip_failures(ip: str) -> int:
    try:
        return int(cache.get(_key(ip)) or 0)
    except Exception:  # noqa: BLE001 - any cache failure: count nothing (module docstring)
        logger.warning("login failures per address unavailable (cache)")
        return 0


def ip_locked(ip: str) -> bool:
    return bool(ip) and ip_failures(ip) >= settings.LEXTRACE_LOGIN_IP_FAILURE_LIMIT


def ip_failure_record(ip: str, *, request=None) -> int:
    """Count one failed login from ``ip``; the one that reaches the limit is audited."""
    if not ip:
        return 0
    try:
        cache.add(_key(ip), 0, timeout=_window_s())
        count = cache.incr(_key(ip))
    except Exception:  # noqa: BLE001
        logger.warning("could not count a failed login per address (cache)")
        return 0
    if count == settings.LEXTRACE_LOGIN_IP_FAILURE_LIMIT:
        with transaction.atomic():
            audit_append(action="accounts.login_ip_locked_out", object_type="accounts.login_ip", object_id=ip,
                         after={"ip": ip, "failures": count}, request=request)
    return count


def login_ip_unlock(*, ip: str, user=None) -> bool:
    """Lift an address's lock (an administrator's command); audited. False if it was not locked."""
    failures = ip_failures(ip)
    if failures < settings.LEXTRACE_LOGIN_IP_FAILURE_LIMIT:
        return False
    with transaction.atomic():
        cache.delete(_key(ip))
        audit_append(action="accounts.login_ip_unlocked", object_type="accounts.login_ip", object_id=ip,
                     before={"ip": ip, "failures": failures}, actor=user)
    return True


class IpLockoutBackend:
    """First authentication backend: refuses every login from a locked address, before any
    password is checked (Django then tries no other backend). The lockout page is axes' own (429),
    so a locked address looks like a locked username."""

    def authenticate(self, request, **credentials):
        from apps.accounts.services import client_ip

        if request is not None and ip_locked(client_ip(request)):
            request.axes_locked_out = True
            request.lextrace_ip_locked = True
            raise PermissionDenied
        # No get_user(): this backend never signs anybody in, so no session may name it.
        return None
