"""B3: random team/user/case ownership graphs; no list, search, filter, ordering or pagination
parameter widens what a user sees. B4: admin-only areas refuse staff and reviewers (walked
generically by URL prefix, so new pages there are covered)."""

import datetime as dt

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from apps.accounts.models import Role, Team
from apps.accounts.services import user_create
from apps.cases.services.cases import case_create
from tests.test_url_access import ROUTES, concrete

pytestmark = pytest.mark.django_db


class _Rollback(Exception):
    pass


graphs = st.fixed_dictionaries({
    "teams": st.integers(min_value=1, max_value=4),
    # each user: a set of team indexes (maybe none) and whether they are a reviewer as well
    "users": st.lists(st.tuples(st.sets(st.integers(0, 3), max_size=3), st.booleans()), min_size=1, max_size=4),
    # each case: the team index it belongs to
    "cases": st.lists(st.integers(0, 3), min_size=1, max_size=6),
    "params": st.lists(st.sampled_from(["team", "q", "page", "status", "ordering", "matter"]), max_size=3),
})


@hsettings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(graph=graphs)
def test_no_listing_ever_shows_a_case_outside_the_callers_teams(client, graph):
    try:
        with transaction.atomic():
            teams = [Team.objects.create(name=f"T{i}") for i in range(graph["teams"])]
            owner = user_create(username="owner", password="owner-password-1", roles=[Role.STAFF], teams=teams)
            cases = [case_create(user=owner, team=teams[t % len(teams)], facts=f"事实{n}：被告人盗窃。",
                                 offence_date=dt.date(2020, 1, 1), defendants=["甲"], title=f"case-{n}")
                     for n, t in enumerate(graph["cases"])]
            all_ids = {c.pk for c in cases}
            for u, (memberships, reviewer) in enumerate(graph["users"]):
                mine = [teams[i % len(teams)] for i in memberships]
                roles = [Role.STAFF] + ([Role.REVIEWER] if reviewer else [])
                user = user_create(username=f"u{u}", password="user-password-1", roles=roles, teams=mine)
                allowed = {c.pk for c in cases if c.team in mine}
                client.force_login(user)
                other = teams[-1].pk
                query = {"team": other, "q": "事实", "page": 1, "status": "none", "ordering": "-id",
                         "matter": other}
                params = {p: query[p] for p in graph["params"]}
                api = client.get("/api/v1/cases/", params)
                assert api.status_code in (200, 400), api.content
                if api.status_code == 200:
                    assert {row["id"] for row in api.json()["results"]} <= allowed
                page = client.get("/cases/", params)
                assert page.status_code == 200
                shown = {pk for pk in all_ids if f'href="/cases/{pk}/"' in page.content.decode()}
                assert shown <= allowed
                if not params:  # the check can see what is listed: unfiltered, exactly the user's cases
                    assert shown == allowed and {row["id"] for row in api.json()["results"]} == allowed
                export = client.get("/cases/export.csv", params).content.decode()
                assert not any(f"case-{n}," in export for n, c in enumerate(cases) if c.pk not in allowed)
                for case in cases:
                    expected = 200 if case.pk in allowed else 404
                    assert client.get(f"/api/v1/cases/{case.pk}/").status_code == expected
            raise _Rollback
    except _Rollback:
        pass


ADMIN_ONLY_PREFIXES = ("corpus/", "models/")


@pytest.mark.parametrize("route", [r for r in ROUTES if r.startswith(ADMIN_ONLY_PREFIXES)])
def test_staff_and_reviewers_cannot_import_statutes_or_train_models(personas, route):
    path = concrete(route)
    for user in (personas.staff_a, personas.reviewer):
        client = personas.client(user)
        for method in ("get", "post"):
            response = getattr(client, method)(path)
            assert response.status_code in (302, 403, 404, 405), (user.username, method, path, response.status_code)
            if response.status_code == 302:
                assert "login" in response["Location"] or "admin" in response["Location"], response["Location"]


def test_the_admin_only_walk_covers_import_and_training(personas):
    routes = [r for r in ROUTES if r.startswith(ADMIN_ONLY_PREFIXES)]
    assert any(r.startswith("corpus/") for r in routes) and any(r.startswith("models/") for r in routes)


def test_case_files_never_reach_the_retrieval_indexes():
    """F7 by construction: retrieval (apps/corpus, apps/graph, worker/agents) reads only the published
    corpus; no module there imports the cases app, so one team's facts cannot be retrieved for another."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for package in ("apps/corpus", "apps/graph", "worker/agents"):
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                offenders += [f"{path.relative_to(root)}: {n}" for n in names if n.startswith("apps.cases")]
    assert not offenders, offenders
