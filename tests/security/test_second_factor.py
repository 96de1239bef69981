"""A7, second part: reviewers and administrators confirm every sign-in with a TOTP code.

Real password logins through the login view, then enrolment with the key the page
shows, verification on later sign-ins, throttling of wrong codes, 403 for
session API calls before the second factor, and no code asked of staff.
"""

import re
import time
from base64 import b32encode

import pytest
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from apps.audit.models import AuditEvent
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def otp_on(settings):
    settings.OTP_ROLES = ["reviewer", "admin"]
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # throttling has its own test below
    return settings


def sign_in(username: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    response = client.post("/accounts/login/", {"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.content[:300]
    return client


def code(device: TOTPDevice, *, steps_ahead: int = 0) -> str:
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + steps_ahead * device.step
    return f"{totp.token():0{device.digits}d}"


def test_a_reviewer_enrols_with_the_key_shown_and_is_asked_for_a_code_at_the_next_sign_in(personas, otp_on):
    client = sign_in("reviewer")
    queue = client.get("/review/")
    assert queue.status_code == 302 and queue["Location"].startswith("/accounts/second-factor/setup/")
    page = client.get(queue["Location"])
    assert page.status_code == 200
    shown = re.search(r'<code id="otp-key">([A-Z2-7 ]+)</code>', page.content.decode()).group(1).replace(" ", "")
    device = TOTPDevice.objects.get(user=personas.reviewer, confirmed=False)
    assert shown == b32encode(device.bin_key).decode().rstrip("=")

    wrong = client.post("/accounts/second-factor/setup/", {"token": "000000" if code(device) != "000000" else "111111"})
    assert wrong.status_code == 400 and "not valid" in wrong.content.decode()
    assert client.get("/review/").status_code == 302  # still not through
    done = client.post("/accounts/second-factor/setup/", {"token": code(device), "next": "/review/"})
    assert done.status_code == 302 and done["Location"] == "/review/"
    assert client.get("/review/").status_code == 200
    device.refresh_from_db()
    assert device.confirmed

    # Next sign-in: the code is asked for (a later time step: a code is never accepted twice).
    again = sign_in("reviewer")
    asked = again.get("/review/")
    assert asked["Location"].startswith("/accounts/second-factor/?")
    assert again.post("/accounts/second-factor/", {"token": code(device, steps_ahead=1), "next": "/review/"})["Location"] == "/review/"
    assert again.get("/review/").status_code == 200
    actions = list(AuditEvent.objects.filter(action__startswith="auth.otp").order_by("seq").values_list("action", flat=True))
    assert actions == ["auth.otp_refused", "auth.otp_enrolled", "auth.otp_verified"]


def test_before_the_second_factor_session_api_calls_are_refused_and_htmx_is_redirected(personas, otp_on):
    client = sign_in("admin")
    api = client.get("/api/v1/cases/")
    assert api.status_code == 403 and "second factor" in api.json()["detail"]
    fragment = client.get("/review/", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 204 and fragment["HX-Redirect"].startswith("/accounts/second-factor/setup/")
    # Logging out and the health page need no code.
    assert client.get("/healthz").status_code in (200, 503)


def test_staff_are_not_asked_and_the_setting_can_turn_it_off(personas, otp_on, settings):
    assert sign_in("staff_a").get("/cases/").status_code == 200
    settings.OTP_ROLES = []
    assert sign_in("reviewer").get("/review/").status_code == 200


def test_wrong_codes_are_throttled_even_before_the_right_one(personas, otp_on, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 60
    client = sign_in("reviewer")
    client.get("/accounts/second-factor/setup/")
    device = TOTPDevice.objects.get(user=personas.reviewer)
    device.confirmed = True
    device.save()
    bad = "123456" if code(device) != "123456" else "654321"
    assert "not valid" in client.post("/accounts/second-factor/", {"token": bad}).content.decode()
    throttled = client.post("/accounts/second-factor/", {"token": code(device)})
    assert throttled.status_code == 400 and "Too many wrong codes" in throttled.content.decode()
    assert client.get("/review/").status_code == 302


def test_the_next_parameter_cannot_send_the_user_elsewhere(personas, otp_on):
    client = sign_in("reviewer")
    client.get("/accounts/second-factor/setup/")
    device = TOTPDevice.objects.get(user=personas.reviewer)
    done = client.post("/accounts/second-factor/setup/", {"token": code(device), "next": "https://evil.example/"})
    assert done["Location"] == "/"
