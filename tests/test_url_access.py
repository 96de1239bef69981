"""INV-1: every URL is denied to anonymous users except an explicit allow-list."""

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

# Patterns anonymous users may open. Everything else must redirect to login
# (pages) or answer 401/403 (API).
PUBLIC = {
    "accounts/login/",
    "healthz",
    "ping",
    "health/",
    "i18n/setlang/",
    "admin/login/",
}


def all_patterns(resolver=None, prefix=""):
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from all_patterns(entry, route)
        elif isinstance(entry, URLPattern):
            yield route


def concrete(route: str) -> str:
    """A requestable path for a route: fill every converter with a plausible value."""
    path = re.sub(r"<int:[^>]+>", "1", route)
    path = re.sub(r"<(?:str|slug|path):[^>]+>", "x", path)
    path = re.sub(r"<[^>]+>", "1", path)
    # Regex routes (Django admin): take the literal part.
    path = path.replace("^", "").replace("$", "").replace("\\Z", "")
    path = re.sub(r"\(\?P<[^>]+>[^)]*\)", "1", path)
    return "/" + path


ROUTES = sorted(set(all_patterns()))


@pytest.mark.django_db
@pytest.mark.parametrize("route", ROUTES)
def test_anonymous_users_are_turned_away_from_every_non_public_url(client, route):
    path = concrete(route)
    response = client.get(path)
    if route in PUBLIC:
        assert response.status_code in (200, 302, 405, 503), (route, response.status_code)
        return
    assert response.status_code in (301, 302, 401, 403, 404), (route, response.status_code)
    if response.status_code in (301, 302):
        assert "login" in response["Location"], (route, response["Location"])


def test_the_allow_list_names_only_real_routes():
    assert PUBLIC <= set(ROUTES)


@pytest.mark.django_db
def test_staff_of_team_b_gets_404_for_team_a(personas):
    client = personas.client(personas.staff_b)
    assert client.get(f"/accounts/teams/{personas.team_a.pk}/").status_code == 404
    assert client.get(f"/accounts/teams/{personas.team_b.pk}/").status_code == 200
    listing = client.get("/accounts/teams/").content.decode()
    assert "Team B" in listing and "Team A" not in listing


@pytest.mark.django_db
def test_a_reviewer_of_both_teams_sees_both(personas):
    client = personas.client(personas.reviewer)
    assert client.get(f"/accounts/teams/{personas.team_a.pk}/").status_code == 200
    assert client.get(f"/accounts/teams/{personas.team_b.pk}/").status_code == 200


@pytest.mark.django_db
def test_a_user_cannot_poll_another_users_worker_ping(personas):
    from apps.core.models import WorkerPing

    ping = WorkerPing.objects.create(requested_by=personas.staff_a)
    assert personas.client(personas.staff_a).get(f"/health/pings/{ping.pk}/").status_code == 200
    assert personas.client(personas.staff_b).get(f"/health/pings/{ping.pk}/").status_code == 404


@pytest.mark.django_db
def test_only_admins_reach_the_admin_site(personas):
    assert personas.client(personas.admin).get("/admin/").status_code == 200
    assert personas.client(personas.staff_a).get("/admin/").status_code == 302
    assert personas.client(personas.reviewer).get("/admin/").status_code == 302


@pytest.mark.django_db
def test_a_post_without_a_csrf_token_is_refused(personas):
    client = personas.client(personas.staff_a, enforce_csrf_checks=True)
    assert client.post("/health/pings/").status_code == 403
