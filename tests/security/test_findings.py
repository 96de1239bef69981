"""The low findings of the second security round, each fixed and pinned here (docs/RELIABILITY.md,
section K): NUL bytes and out-of-range ids, an overlong username at login, the open redirect of
the review assignment, Cache-Control on private responses, unconfirmed intake uploads, the facts
limit at extraction, an Idempotency-Key reused with another body, edits under legal hold, the
per-address lockout, and a production start-up without a second factor."""

import datetime as dt
import secrets
import uuid
from pathlib import Path

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse

from apps.audit.models import AuditEvent
from apps.cases.models import Case, CaseUpload, JudgmentRun
from apps.cases.services.cases import MAX_FACTS_CHARS, CaseUnderHold, case_create, case_update
from apps.cases.services.uploads import case_upload_create
from apps.review.services.holds import legal_hold_release, legal_hold_set
from apps.review.services.reviews import decision_make, review_accept_rest, review_for_run, review_open
from tests.cases.conftest import demo_case, judged_run, judging_corpus, make_case, make_run  # noqa: F401
from tests.conftest import PASSWORD, api_token_for
from tests.legalsite.test_settings import PROD, run_manage

pytestmark = pytest.mark.django_db
BIGINT_PLUS_ONE = 2**63


def done_run(personas):
    """A finished run of team A without results: enough for the review pages' routing."""
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=run.pk).update(status=JudgmentRun.Status.DONE)
    return run


# --- NUL bytes and out-of-range ids → 400 / 404, never 500 ------------------------------------------

@pytest.mark.parametrize("who, url", [
    ("admin", "/graph/explore/?q=a%00b"),
    ("reviewer", "/audit/?object_id=%00"),
    ("reviewer", "/audit/?action=x%00y"),
    ("reviewer", "/review/?q=%00"),
    ("staff_a", "/cases/?q=%00"),
    ("staff_a", "/cases/?%00=1"),
    ("staff_a", "/api/v1/cases/?q=%00"),
])
def test_a_nul_byte_in_a_query_parameter_is_a_400(personas, who, url):
    response = personas.client(getattr(personas, who)).get(url)
    assert response.status_code == 400


def test_a_nul_byte_in_a_form_field_is_a_400_and_changes_nothing(personas):
    client = personas.client(personas.staff_a)
    record = demo_case()
    response = client.post("/cases/new/", {"team": personas.team_a.pk, "title": "a\x00b", "facts": record["fact"],
                                           "offence_date": "2018-09-14", "defendants": "王某"})
    assert response.status_code == 400 and not Case.objects.exists()


def test_a_nul_byte_in_an_api_reason_is_a_400(personas):
    case = make_case(personas.staff_a, personas.team_a)
    api = Client(HTTP_AUTHORIZATION=f"Token {api_token_for(personas.reviewer)}")
    response = api.post(f"/api/v1/cases/{case.pk}/hold/", {"reason": "a\x00b"}, content_type="application/json")
    assert response.status_code == 400 and not case.legal_holds.exists()
    # Not an object at all: a 400 too, never an AttributeError.
    assert api.post(f"/api/v1/cases/{case.pk}/hold/", [1, 2], content_type="application/json").status_code == 400


@pytest.mark.parametrize("who, url", [
    ("admin", f"/graph/neighbourhood/Article/{BIGINT_PLUS_ONE}.json"),
    ("staff_a", f"/cases/{BIGINT_PLUS_ONE}/"),
    ("staff_a", f"/cases/runs/{10**30}/"),
    ("staff_a", f"/api/v1/cases/{BIGINT_PLUS_ONE}/"),
    ("reviewer", f"/review/runs/{BIGINT_PLUS_ONE}/"),
])
def test_an_id_beyond_bigint_in_the_path_is_a_404(personas, who, url):
    assert personas.client(getattr(personas, who)).get(url).status_code == 404


@pytest.mark.parametrize("url", [f"/review/?team={BIGINT_PLUS_ONE}", "/review/?team=%C2%B2", f"/review/?q={10**25}",
                                 "/review/?q=%C2%B2"])
def test_out_of_range_or_unicode_digits_in_review_filters_are_ignored(personas, url):
    assert personas.client(personas.reviewer).get(url).status_code == 200


def test_out_of_range_positions_on_the_review_page_are_ignored(personas, judged_run):  # noqa: F811
    run = judged_run
    client = personas.client(personas.reviewer)
    assert client.get(f"/review/runs/{run.pk}/?d={BIGINT_PLUS_ONE}").status_code == 200
    assert client.get(f"/review/runs/{run.pk}/?d=%C2%B2").status_code == 200


# --- an overlong username at login ------------------------------------------------------------------

@pytest.mark.parametrize("length", [151, 256, 5000])
def test_an_overlong_username_is_a_failed_login_not_a_server_error(personas, length):
    response = Client(REMOTE_ADDR="192.0.2.10").post("/accounts/login/", {"username": "u" * length,
                                                                         "password": PASSWORD})
    assert response.status_code == 200 and "_auth_user_id" not in response.wsgi_request.session
    assert not AccessAttempt.objects.filter(username__startswith="uuu").exists()


# --- the review assignment's `next` -------------------------------------------------------------------

@pytest.mark.parametrize("target, expected", [
    ("https://evil.test/phish", "/review/"),
    ("//evil.test/phish", "/review/"),
    ("/\\evil.test", "/review/"),
    ("javascript:alert(1)", "/review/"),
    ("/review/?status=all", "/review/?status=all"),
])
def test_the_assignment_redirects_only_within_the_site(personas, target, expected):
    run = done_run(personas)
    response = personas.client(personas.reviewer).post(f"/review/runs/{run.pk}/assign/", {"to": "me", "next": target})
    assert response.status_code == 302 and response["Location"] == expected


# --- Cache-Control ------------------------------------------------------------------------------------

def test_private_pages_api_answers_and_downloads_are_never_cached(personas, judged_run):  # noqa: F811
    staff, reviewer = personas.client(personas.staff_a), personas.client(personas.reviewer)
    api = Client(HTTP_AUTHORIZATION=f"Token {api_token_for(personas.staff_a)}")
    responses = {
        "case": staff.get(f"/cases/{judged_run.case_id}/"),
        "run": staff.get(f"/cases/runs/{judged_run.pk}/"),
        "bundle": staff.get(f"/cases/runs/{judged_run.pk}/bundle.json"),
        "api": api.get(f"/api/v1/runs/{judged_run.pk}/"),
        "api bundle": api.get(f"/api/v1/runs/{judged_run.pk}/bundle/"),
        "review": reviewer.get(f"/review/runs/{judged_run.pk}/"),
    }
    review = review_for_run(judged_run)
    for result in judged_run.results.order_by("position"):  # an approval needs every judgment read and decided
        review_open(review=review, result=result, user=personas.reviewer)
        review_accept_rest(review=review, result=result, user=personas.reviewer)
    decision_make(review=review, kind="approve", reason="verified", user=personas.reviewer)
    responses["memo"] = reviewer.get(reverse("review:memo", args=[judged_run.pk, "docx"]))
    for name, response in responses.items():
        assert response.status_code == 200, name
        assert response["Cache-Control"] == "private, no-store", name
    # The memo download is audited, bound to the approval it exported.
    event = AuditEvent.objects.filter(action="review.memo_export").order_by("-seq").first()
    assert event.after["run"] == judged_run.pk and event.after["format"] == "docx" and event.actor_id == personas.reviewer.pk


# --- intake uploads: the limit at extraction, and unconfirmed ones purged -----------------------------------

def _stored_files() -> set[Path]:
    root = Path(settings.MEDIA_ROOT) / "case-uploads"
    return set(root.glob("*")) if root.is_dir() else set()


def test_the_facts_limit_applies_when_the_document_is_read(personas):
    before = _stored_files()
    with pytest.raises(ValidationError) as refused:
        case_upload_create(user=personas.staff_a, team=personas.team_a, data=("事" * (MAX_FACTS_CHARS + 1)).encode(),
                           filename="long.txt")
    assert "file" in refused.value.message_dict and str(MAX_FACTS_CHARS) in refused.value.message_dict["file"][0]
    assert not CaseUpload.objects.exists() and _stored_files() == before


def test_unconfirmed_uploads_are_purged_by_the_command_and_confirmed_ones_kept(personas, capsys):
    record = demo_case()
    data = record["fact"].encode()
    unconfirmed = case_upload_create(user=personas.staff_a, team=personas.team_a, data=data, filename="draft.txt")
    confirmed = case_upload_create(user=personas.staff_a, team=personas.team_a, data=data, filename="final.txt")
    fresh = case_upload_create(user=personas.staff_a, team=personas.team_a, data=data, filename="now.txt")
    case_create(user=personas.staff_a, team=personas.team_a, facts=confirmed.text, offence_date=dt.date(2018, 9, 14),
                defendants=["王某"], upload=confirmed)
    old = dt.datetime.now(dt.UTC) - dt.timedelta(hours=settings.LEXTRACE_UPLOAD_UNCONFIRMED_HOURS + 1)
    CaseUpload.objects.filter(pk__in=[unconfirmed.pk, confirmed.pk]).update(created_at=old)
    path = Path(unconfirmed.file.path)
    assert path.exists()
    with pytest.MonkeyPatch.context() as mp:
        # The file is removed once the deletion commits; this test's transaction never does.
        mp.setattr("django.db.transaction.on_commit", lambda fn, *a, **k: fn())
        call_command("purge_unconfirmed_uploads")
    assert "deleted 1 unconfirmed upload(s)" in capsys.readouterr().out
    assert set(CaseUpload.objects.values_list("pk", flat=True)) == {confirmed.pk, fresh.pk}
    assert not path.exists() and Path(confirmed.file.path).exists()
    actions = list(AuditEvent.objects.filter(object_type="cases.caseupload").values_list("action", "object_id"))
    assert ("case.upload", str(unconfirmed.pk)) in actions and ("case.upload_purge", str(unconfirmed.pk)) in actions
    assert ("case.upload_confirm", str(confirmed.pk)) in actions


# --- Idempotency-Key with another body ------------------------------------------------------------------

def test_an_idempotency_key_reused_with_another_body_is_a_422(personas):
    api = Client(HTTP_AUTHORIZATION=f"Token {api_token_for(personas.staff_a)}")
    record = demo_case()
    body = {"team": personas.team_a.pk, "facts": record["fact"], "offence_date": "2018-09-14",
            "defendants": record["defendants"]}
    key = {"HTTP_IDEMPOTENCY_KEY": f"k-{uuid.uuid4()}"}
    first = api.post("/api/v1/cases/", body, content_type="application/json", **key)
    again = api.post("/api/v1/cases/", body, content_type="application/json", **key)
    other = api.post("/api/v1/cases/", {**body, "facts": body["facts"] + "另查明。"}, content_type="application/json", **key)
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 422)
    assert again.json()["id"] == first.json()["id"] and Case.objects.count() == 1


# --- edits under legal hold -------------------------------------------------------------------------------

def test_a_case_under_legal_hold_cannot_be_edited(personas):
    case = make_case(personas.staff_a, personas.team_a)
    legal_hold_set(case=case, reason="litigation pending", user=personas.reviewer)
    with pytest.raises(CaseUnderHold):
        case_update(case=case, user=personas.staff_a, expected_version=1, title="changed")
    page = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en").post(
        f"/cases/{case.pk}/edit/", {"title": "changed", "facts": case.facts, "offence_date": "2018-09-14",
                                    "defendants": "\n".join(case.defendants), "version": 1})
    assert page.status_code == 200 and "under legal hold" in page.content.decode()
    api = Client(HTTP_AUTHORIZATION=f"Token {api_token_for(personas.staff_a)}")
    patched = api.patch(f"/api/v1/cases/{case.pk}/", {"version": 1, "title": "changed"}, content_type="application/json")
    assert patched.status_code == 409
    case.refresh_from_db()
    assert case.version == 1 and case.title != "changed"
    legal_hold_release(case=case, reason="settled", user=personas.reviewer)
    assert case_update(case=case, user=personas.staff_a, expected_version=1, title="changed").version == 2


# --- the per-address lockout ----------------------------------------------------------------------------

def test_many_usernames_from_one_address_lock_the_address(personas):
    ip = f"198.18.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}"
    with override_settings(LEXTRACE_LOGIN_IP_FAILURE_LIMIT=6):
        for name in ("staff_a", "staff_b", "nobody", "reviewer", "admin", "ghost"):  # one failure each: no pair lock
            assert Client(REMOTE_ADDR=ip).post("/accounts/login/", {"username": name,
                                                                     "password": "wrong-password-9"}).status_code == 200
        locked = Client(REMOTE_ADDR=ip, HTTP_ACCEPT_LANGUAGE="en").post(
            "/accounts/login/", {"username": "staff_a", "password": PASSWORD})
        assert locked.status_code == 429 and "from your address" in locked.content.decode()
        assert "_auth_user_id" not in locked.wsgi_request.session
        elsewhere = Client(REMOTE_ADDR="198.51.100.77").post("/accounts/login/", {"username": "staff_a",
                                                                                  "password": PASSWORD})
        assert elsewhere.status_code == 302
        assert AuditEvent.objects.filter(action="accounts.login_ip_locked_out", object_id=ip).count() == 1
        call_command("login_ip_unlock", ip)
        assert AuditEvent.objects.filter(action="accounts.login_ip_unlocked", object_id=ip).count() == 1
        assert Client(REMOTE_ADDR=ip).post("/accounts/login/", {"username": "staff_a",
                                                                "password": PASSWORD}).status_code == 302


# --- production without a second factor ------------------------------------------------------------------

@pytest.mark.django_db(databases=[])
def test_https_without_a_second_factor_is_refused_at_start_up_unless_said_explicitly():
    refused = run_manage("check", **PROD, LEXTRACE_OTP_ROLES="")
    assert refused.returncode != 0 and "LEXTRACE_OTP_ROLES empty" in refused.stderr
    allowed = run_manage("check", "--deploy", **PROD, LEXTRACE_OTP_ROLES="", LEXTRACE_ALLOW_NO_SECOND_FACTOR="1")
    assert "accounts.W001" in allowed.stdout + allowed.stderr
    assert run_manage("check", **PROD).returncode == 0


# --- the audit chain's missing events (the rest: test_coverage.py, test_api_tokens.py, above) -------

def test_cancelling_a_run_is_audited_with_its_outcome(personas):
    from apps.cases.services.runs import judgment_cancel

    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    assert personas.client(personas.staff_a).post(f"/cases/runs/{run.pk}/cancel/").status_code == 302
    event = AuditEvent.objects.filter(action="run.cancel", object_id=str(run.pk)).get()
    assert event.actor_id == personas.staff_a.pk
    assert event.before == {"status": "queued"} and event.after == {"status": "cancelled", "cancel_requested": True}
    with pytest.raises(ValidationError):
        judgment_cancel(run=run, user=personas.staff_a)  # already finished: refused, no second event
    assert AuditEvent.objects.filter(action="run.cancel", object_id=str(run.pk)).count() == 1
