"""Login security events: the session clocks start at login; a lockout and its release are audited."""

import time

from axes.models import AccessAttempt
from axes.signals import user_locked_out
from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from apps.accounts.middleware import AUTH_AT, SEEN_AT
from apps.audit.services import audit_append


@receiver(user_logged_in, dispatch_uid="lextrace_session_clocks")
def start_session_clocks(sender, request, user, **kwargs):
    if request is not None and hasattr(request, "session"):
        request.session[AUTH_AT] = request.session[SEEN_AT] = time.time()


@receiver(user_locked_out, dispatch_uid="lextrace_audit_lockout")
def audit_lockout(sender, request, username, ip_address, **kwargs):
    # Axes signals every refused attempt of a locked-out pair; the lock itself happens at the limit.
    if getattr(request, "axes_failures_since_start", None) != settings.AXES_FAILURE_LIMIT:
        return
    with transaction.atomic():
        audit_append(action="accounts.login_locked_out", object_type="accounts.login", object_id=username or "",
                     after={"username": username or "", "ip": ip_address or "",
                            "failures": settings.AXES_FAILURE_LIMIT}, request=request)


@receiver(post_delete, sender=AccessAttempt, dispatch_uid="lextrace_audit_unlock")
def audit_unlock(sender, instance, **kwargs):
    # Only the release of a lock is an event (by an admin, a command or the cool-off clean-up);
    # forgetting failures below the limit after a good login is not.
    if instance.failures_since_start < settings.AXES_FAILURE_LIMIT:
        return
    with transaction.atomic():
        audit_append(action="accounts.login_unlocked", object_type="accounts.login", object_id=instance.username or "",
                     before={"username": instance.username or "", "ip": instance.ip_address or "",
                             "failures": instance.failures_since_start})


@receiver(user_login_failed, dispatch_uid="lextrace_count_ip_failure")
def count_ip_failure(sender, credentials, request=None, **kwargs):
    from apps.accounts.lockout import ip_failure_record
    from apps.accounts.services import client_ip

    # A login refused because the address is already locked is not one more failure.
    if request is not None and not getattr(request, "lextrace_ip_locked", False):
        ip_failure_record(client_ip(request), request=request)
