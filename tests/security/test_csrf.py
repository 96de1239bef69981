"""A2-A4: CSRF is enforced for htmx posts and the session-authenticated API, and a forged Origin
over HTTPS is refused. Every client here enforces CSRF: Django's default test client skips it."""

import logging
import re

import pytest
from django.conf import settings

from apps.cases.models import Case
from apps.core.models import WorkerPing
from tests.cases.conftest import demo_case
from tests.conftest import api_token_for

pytestmark = pytest.mark.django_db


def csrf_token_of_page(client, path="/health/") -> str:
    html = client.get(path).content.decode()
    # The token htmx sends: base.html puts it into hx-headers on <body>.
    match = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', html)
    assert match, "base.html no longer gives htmx the CSRF token"
    return match.group(1)


def test_an_htmx_post_without_the_token_is_refused_and_logged(personas, caplog):
    client = personas.client(personas.staff_a, enforce_csrf_checks=True)
    client.get("/health/")
    with caplog.at_level(logging.WARNING, logger="django.security.csrf"):
        response = client.post("/health/pings/", HTTP_HX_REQUEST="true")
    assert response.status_code == 403
    assert not WorkerPing.objects.exists()
    assert any(r.name == "django.security.csrf" and "CSRF" in r.getMessage() for r in caplog.records)


def test_an_htmx_post_with_the_token_from_hx_headers_succeeds(personas):
    client = personas.client(personas.staff_a, enforce_csrf_checks=True)
    token = csrf_token_of_page(client)
    response = client.post("/health/pings/", HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
    assert WorkerPing.objects.filter(requested_by=personas.staff_a).count() == 1


def api_case(team):
    record = demo_case()
    return {"team": team.pk, "title": "CSRF case", "facts": record["fact"], "offence_date": "2018-09-14",
            "defendants": record["defendants"]}


def test_the_api_with_a_session_needs_the_token(personas):
    client = personas.client(personas.staff_a, enforce_csrf_checks=True)
    refused = client.post("/api/v1/cases/", api_case(personas.team_a), content_type="application/json")
    assert refused.status_code == 403 and not Case.objects.exists()
    token = csrf_token_of_page(client)
    accepted = client.post("/api/v1/cases/", api_case(personas.team_a), content_type="application/json",
                           HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 201, accepted.content
    for method in ("put", "patch", "delete"):
        response = getattr(client, method)(f"/api/v1/cases/{accepted.json()['id']}/", {},
                                           content_type="application/json")
        assert response.status_code == 403, method


def test_the_api_with_a_token_needs_no_csrf_token(personas):
    key = api_token_for(personas.staff_a)
    client = personas.client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {key}")
    response = client.post("/api/v1/cases/", api_case(personas.team_a), content_type="application/json")
    assert response.status_code == 201


@pytest.mark.parametrize("origin, expected", [
    ("https://evil.test", 403),
    ("null", 403),
    ("http://testserver", 403),   # a downgraded scheme is another origin
    ("https://testserver", 200),
])
def test_over_https_a_foreign_origin_is_refused_even_with_a_valid_token(personas, origin, expected):
    client = personas.client(personas.staff_a, enforce_csrf_checks=True)
    token = csrf_token_of_page(client)
    response = client.post("/health/pings/", secure=True, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token,
                           HTTP_ORIGIN=origin)
    assert response.status_code == expected


def test_over_https_a_foreign_referer_is_refused(personas):
    client = personas.client(personas.staff_a, enforce_csrf_checks=True)
    token = csrf_token_of_page(client)
    response = client.post("/health/pings/", secure=True, HTTP_X_CSRFTOKEN=token,
                           HTTP_REFERER="https://evil.test/page")
    assert response.status_code == 403
    assert client.post("/health/pings/", secure=True, HTTP_X_CSRFTOKEN=token,
                       HTTP_REFERER="https://testserver/health/").status_code == 302


def test_no_origin_is_trusted_beyond_our_own_by_default():
    assert settings.CSRF_TRUSTED_ORIGINS == []
