"""A5: the session key rotates at login; cookie flags; idle and absolute timeouts; logout ends the
server-side session."""

import os
import secrets
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from freezegun import freeze_time

from tests.conftest import PASSWORD

ROOT = Path(__file__).resolve().parents[2]


def log_in(client, user, password=PASSWORD, **extra):
    return client.post("/accounts/login/", {"username": user.username, "password": password}, **extra)


@pytest.mark.django_db
def test_the_session_key_changes_at_login_so_a_planted_key_is_useless(personas):
    client = Client()
    client.get("/accounts/login/")
    client.cookies[settings.SESSION_COOKIE_NAME] = "plantedbyattacker0123456789abcd"
    session = client.session
    session["marker"] = "pre-login"
    session.save()
    before = client.cookies[settings.SESSION_COOKIE_NAME].value
    response = log_in(client, personas.staff_a)
    assert response.status_code == 302
    after = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert after != before
    assert not Session.objects.filter(session_key=before).exists()
    assert client.get("/cases/").status_code == 200


@pytest.mark.django_db
def test_session_and_csrf_cookies_are_httponly_and_samesite(personas):
    client = Client()
    response = log_in(client, personas.staff_a)
    cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    csrf = Client().get("/accounts/login/").cookies[settings.CSRF_COOKIE_NAME]
    assert csrf["httponly"] and csrf["samesite"] == "Lax"


def test_production_cookies_are_secure():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LEXTRACE_"))}
    env.update(DJANGO_SECRET_KEY=secrets.token_urlsafe(64), LEXTRACE_HTTPS="1", DJANGO_SETTINGS_MODULE="legalsite.settings")
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, s.SECURE_HSTS_SECONDS)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.stdout.split() == ["True", "True", "True", "31536000"], out.stderr


@pytest.mark.django_db
def test_an_idle_session_ends_and_the_next_request_goes_to_login(personas):
    client = Client()
    with freeze_time("2026-03-01 09:00:00") as clock:
        log_in(client, personas.staff_a)
        assert client.get("/cases/").status_code == 200
        clock.tick(timedelta(seconds=settings.SESSION_IDLE_SECONDS - 60))
        assert client.get("/cases/").status_code == 200  # activity restarts the idle clock
        clock.tick(timedelta(seconds=settings.SESSION_IDLE_SECONDS - 60))
        assert client.get("/cases/").status_code == 200
        clock.tick(timedelta(seconds=settings.SESSION_IDLE_SECONDS + 1))
        response = client.get("/cases/")
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
        assert client.get("/cases/").status_code == 302


@pytest.mark.django_db
def test_htmx_polling_does_not_keep_an_idle_session_alive(personas):
    client = Client()
    with freeze_time("2026-03-01 09:00:00") as clock:
        log_in(client, personas.staff_a)
        for _ in range(4):
            clock.tick(timedelta(seconds=settings.SESSION_IDLE_SECONDS / 3))
            client.get("/cases/", HTTP_HX_REQUEST="true")
        response = client.get("/cases/")
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_an_active_session_still_ends_at_the_absolute_limit(personas):
    client = Client()
    step = timedelta(seconds=settings.SESSION_IDLE_SECONDS // 2)
    with freeze_time("2026-03-01 09:00:00") as clock:
        log_in(client, personas.staff_a)
        elapsed = timedelta()
        while elapsed + step < timedelta(seconds=settings.SESSION_COOKIE_AGE):
            clock.tick(step)
            elapsed += step
            assert client.get("/cases/").status_code == 200
        clock.tick(timedelta(seconds=settings.SESSION_COOKIE_AGE) - elapsed + timedelta(seconds=1))
        response = client.get("/cases/")
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_logout_deletes_the_server_side_session(personas):
    client = Client()
    log_in(client, personas.staff_a)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert Session.objects.filter(session_key=key).exists()
    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=key).exists()
    # Replaying the old cookie does not bring the user back.
    replay = Client()
    replay.cookies[settings.SESSION_COOKIE_NAME] = key
    assert replay.get("/cases/").status_code == 302


@pytest.mark.django_db
def test_activity_is_written_to_the_session_at_most_once_a_minute(personas):
    """A page view within the minute after the last recorded activity does not save the session."""
    from apps.accounts.middleware import SEEN_AT_RESOLUTION_S

    client = Client()
    with freeze_time("2026-03-01 09:00:00") as clock:
        log_in(client, personas.staff_a)
        key = client.cookies[settings.SESSION_COOKIE_NAME].value
        saved = Session.objects.get(session_key=key).session_data
        clock.tick(timedelta(seconds=SEEN_AT_RESOLUTION_S - 1))
        assert client.get("/cases/").status_code == 200
        assert Session.objects.get(session_key=key).session_data == saved, "not saved within the minute"
        clock.tick(timedelta(seconds=2))
        assert client.get("/cases/").status_code == 200
        assert Session.objects.get(session_key=key).session_data != saved, "recorded once the minute is over"
