"""The second sign-in factor (TOTP, RFC 6238) for the roles that decide: reviewers and administrators.

After the password, a user in ``settings.OTP_ROLES`` must prove a one-time code
from an authenticator app before any page opens: the first time they enrol (the
page shows the key; the device counts only once a code from it has been
verified), later they enter a code. Wrong codes are throttled by the device
(django-otp: growing delays after each failure). Enrolment and every
successful or refused verification are audited (user ids only, never codes).
An administrator resets a lost device by deleting it in the admin site; the user
enrols again at the next sign-in.

API tokens are a separate credential issued by administrators and are not
asked for a code; a session-authenticated API call from a user who has not yet
given the second factor is refused (403).
"""

from __future__ import annotations

from base64 import b32encode

from django.conf import settings
from django.db import transaction
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice

from apps.audit.services import audit_append

DEVICE_NAME = "authenticator"


def second_factor_required(user) -> bool:
    if not user.is_authenticated:
        return False
    roles = set(settings.OTP_ROLES)
    return bool(roles & set(user.roles)) or (user.is_superuser and "admin" in roles)


def confirmed_device(user) -> TOTPDevice | None:
    return TOTPDevice.objects.filter(user=user, confirmed=True).order_by("pk").first()


def enrolment_device(user) -> TOTPDevice:
    """The unconfirmed device a user is enrolling (created on first visit; its key shown until confirmed)."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("pk").first()
    return device or TOTPDevice.objects.create(user=user, name=DEVICE_NAME, confirmed=False)


def display_key(device: TOTPDevice) -> str:
    key = b32encode(device.bin_key).decode().rstrip("=")
    return " ".join(key[i:i + 4] for i in range(0, len(key), 4))


def _check(request, device: TOTPDevice, token: str, *, enrolling: bool) -> tuple[bool, str]:
    allowed, _detail = device.verify_is_allowed()
    if not allowed:
        return False, "throttled"
    token = "".join(token.split())
    ok = token.isdigit() and device.verify_token(token)
    with transaction.atomic():
        if ok and enrolling:
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            TOTPDevice.objects.filter(user=device.user, confirmed=False).exclude(pk=device.pk).delete()
        action = ("auth.otp_enrolled" if enrolling else "auth.otp_verified") if ok else "auth.otp_refused"
        audit_append(action=action, obj=device.user, after={"device": device.pk}, request=request)
    if ok:
        otp_login(request, device)
        return True, ""
    return False, "wrong"


def enrolment_confirm(request, token: str) -> tuple[bool, str]:
    """Confirm the enrolling device with a code from it; the session counts as verified on success."""
    return _check(request, enrolment_device(request.user), token, enrolling=True)


def second_factor_verify(request, token: str) -> tuple[bool, str]:
    device = confirmed_device(request.user)
    if device is None:
        return False, "no_device"
    return _check(request, device, token, enrolling=False)
