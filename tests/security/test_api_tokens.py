"""API tokens: hashed at rest, shown once, named, expiring, revocable, scoped, listed per user;
reviewer and administrator tokens issued only by an administrator; mint, refusal after expiry and
revocation audited (apps/cases/services/api_tokens.py)."""

import datetime as dt
import hashlib
import json
import re

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.utils import timezone

from apps.accounts.models import ApiToken, Role
from apps.audit.models import AuditEvent
from apps.cases.services.api_tokens import api_token_mint, api_token_revoke
from tests.audit.conftest import head_seq
from tests.cases.conftest import demo_case

pytestmark = pytest.mark.django_db
SECRET = re.compile(r"lxt_[A-Za-z0-9_-]{40,}")


def api(secret: str) -> Client:
    # English answers: the checks below read the refusal's reason (with compiled catalogs the default is Chinese).
    return Client(HTTP_AUTHORIZATION=f"Token {secret}", HTTP_ACCEPT_LANGUAGE="en")


def case_payload(team) -> dict:
    record = demo_case()
    return {"team": team.pk, "facts": record["fact"], "offence_date": "2018-09-14", "defendants": record["defendants"]}


def test_a_minted_token_is_shown_once_and_only_its_hash_is_stored(personas):
    page = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    minted = page.post("/cases/api-token/", {"action": "mint", "name": "nightly export", "scope": "read", "days": "30"})
    assert minted.status_code == 201
    secret = SECRET.search(minted.content.decode())[0]
    assert "shown only this once" in minted.content.decode()
    token = ApiToken.objects.get(user=personas.staff_a)
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest() and token.name == "nightly export"
    assert secret not in json.dumps([str(v) for v in ApiToken.objects.filter(pk=token.pk).values().first().values()])
    assert abs((token.expires_at - timezone.now()) - dt.timedelta(days=30)) < dt.timedelta(minutes=1)
    listing = page.get("/cases/api-token/").content.decode()
    assert secret not in listing and token.prefix in listing and "nightly export" in listing
    assert minted["Cache-Control"] == "private, no-store"
    # The README's call, with the token as printed.
    assert api(secret).get("/api/v1/cases/").status_code == 200
    events = AuditEvent.objects.filter(action="api_token.mint", object_id=str(token.pk))
    assert events.count() == 1 and events[0].after["prefix"] == token.prefix and events[0].actor_id == personas.staff_a.pk
    assert not AuditEvent.objects.filter(after__icontains=secret).exists()


def test_an_expired_token_is_refused_and_each_refusal_is_audited(personas):
    token, secret = api_token_mint(user=personas.staff_a, issuer=personas.staff_a, name="ci", scope="write", days=1)
    assert api(secret).get("/api/v1/cases/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    start = head_seq()
    for _ in range(2):
        refused = api(secret).get("/api/v1/cases/")
        assert refused.status_code == 401 and "expired" in refused.json()["detail"]
    events = list(AuditEvent.objects.filter(seq__gt=start).values_list("action", "object_id", "after"))
    assert events == [("api_token.refused", str(token.pk), {"user": personas.staff_a.pk, "prefix": token.prefix,
                                                             "state": "expired"})] * 2


def test_a_revoked_token_stops_at_once_and_the_revocation_is_audited(personas):
    token, secret = api_token_mint(user=personas.staff_a, issuer=personas.staff_a, name="laptop", scope="write")
    page = personas.client(personas.staff_a)
    assert page.post("/cases/api-token/", {"action": "revoke", "token": token.pk}).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None and token.revoked_by == personas.staff_a
    assert api(secret).get("/api/v1/cases/").status_code == 401
    assert AuditEvent.objects.filter(action="api_token.revoke", object_id=str(token.pk)).count() == 1
    assert AuditEvent.objects.filter(action="api_token.refused", object_id=str(token.pk),
                                     after__state="revoked").count() == 1
    with pytest.raises(ValidationError):
        api_token_revoke(token=token, user=personas.staff_a)


def test_a_read_only_token_reads_but_cannot_write(personas):
    _token, secret = api_token_mint(user=personas.staff_a, issuer=personas.staff_a, name="reports", scope="read")
    assert api(secret).get("/api/v1/cases/").status_code == 200
    written = api(secret).post("/api/v1/cases/", case_payload(personas.team_a), content_type="application/json")
    assert written.status_code == 403 and "read-only" in written.json()["detail"]
    _token, writer = api_token_mint(user=personas.staff_a, issuer=personas.staff_a, name="intake", scope="write")
    assert api(writer).post("/api/v1/cases/", case_payload(personas.team_a),
                            content_type="application/json").status_code == 201


def test_reviewer_and_admin_tokens_are_issued_only_by_an_administrator(personas):
    reviewer_page = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    assert "issued by an administrator" in reviewer_page.get("/cases/api-token/").content.decode()
    reviewer_page.post("/cases/api-token/", {"action": "mint", "name": "mine", "scope": "write", "days": "30"})
    assert not ApiToken.objects.filter(user=personas.reviewer).exists()
    with pytest.raises(PermissionDenied):
        api_token_mint(user=personas.reviewer, issuer=personas.reviewer, name="mine", scope="write")
    with pytest.raises(PermissionDenied):  # staff cannot issue for anybody else
        api_token_mint(user=personas.staff_b, issuer=personas.staff_a, name="theirs", scope="write")
    assert reviewer_page.post("/cases/api-token/issue/", {"username": "reviewer", "name": "x", "scope": "read",
                                                          "days": "10"}).status_code == 403

    admin_page = personas.client(personas.admin)
    issued = admin_page.post("/cases/api-token/issue/", {"username": "reviewer", "name": "review bot",
                                                         "scope": "write", "days": "10"})
    assert issued.status_code == 201
    secret = SECRET.search(issued.content.decode())[0]
    token = ApiToken.objects.get(user=personas.reviewer)
    assert token.created_by == personas.admin and token.roles == [Role.REVIEWER]
    assert api(secret).get("/api/v1/cases/").status_code == 200
    event = AuditEvent.objects.get(action="api_token.mint", object_id=str(token.pk))
    assert event.actor_id == personas.admin.pk and event.after["user"] == personas.reviewer.pk


def test_a_token_never_carries_a_role_granted_after_it_was_issued(personas):
    _token, secret = api_token_mint(user=personas.staff_a, issuer=personas.staff_a, name="script", scope="write")
    personas.staff_a.roles = [Role.STAFF, Role.REVIEWER]
    personas.staff_a.save(update_fields=["roles"])
    refused = api(secret).get("/api/v1/cases/")
    assert refused.status_code == 401 and "roles changed" in refused.json()["detail"]


def test_a_deactivated_users_token_is_refused(personas):
    _token, secret = api_token_mint(user=personas.staff_a, issuer=personas.staff_a, name="script", scope="write")
    personas.staff_a.is_active = False
    personas.staff_a.save(update_fields=["is_active"])
    assert api(secret).get("/api/v1/cases/").status_code == 401


def test_tokens_are_listed_per_user_and_revoked_only_by_their_owner_or_an_administrator(personas):
    mine, _ = api_token_mint(user=personas.staff_a, issuer=personas.staff_a, name="alpha-token", scope="read")
    theirs, _ = api_token_mint(user=personas.staff_b, issuer=personas.staff_b, name="beta-token", scope="read")
    page = personas.client(personas.staff_a).get("/cases/api-token/").content.decode()
    assert "alpha-token" in page and "beta-token" not in page
    assert personas.client(personas.staff_a).post("/cases/api-token/", {"action": "revoke",
                                                                        "token": theirs.pk}).status_code == 404
    with pytest.raises(PermissionDenied):
        api_token_revoke(token=theirs, user=personas.staff_a)
    api_token_revoke(token=theirs, user=personas.admin)
    theirs.refresh_from_db()
    assert theirs.revoked_by == personas.admin and mine.revoked_at is None


@pytest.mark.parametrize("fields, error", [
    ({"name": "", "scope": "read", "days": 30}, "name"),
    ({"name": "x" * 101, "scope": "read", "days": 30}, "name"),
    ({"name": "ok", "scope": "admin", "days": 30}, "scope"),
    ({"name": "ok", "scope": "read", "days": 0}, "days"),
    ({"name": "ok", "scope": "read", "days": 10_000}, "days"),
])
def test_name_scope_and_lifetime_are_checked(personas, fields, error):
    with pytest.raises(ValidationError) as caught:
        api_token_mint(user=personas.staff_a, issuer=personas.staff_a, **fields)
    assert error in caught.value.message_dict
    page = personas.client(personas.staff_a).post("/cases/api-token/", {"action": "mint", **fields})
    assert page.status_code == 400 and not ApiToken.objects.exists()


@pytest.mark.parametrize("header", ["Token lxt_unknown", "Token", "Token a b", "Bearer lxt_\u00e9", "Token " + "x" * 300])
def test_unknown_or_malformed_tokens_are_refused_without_an_event(personas, header):
    start = head_seq()
    assert Client(HTTP_AUTHORIZATION=header).get("/api/v1/cases/").status_code == 401
    assert head_seq() == start
