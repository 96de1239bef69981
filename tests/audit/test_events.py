"""C1 (the parts built so far): business operations leave the expected events, with who, what and where."""

import pytest
from django.db import transaction
from django.http import HttpResponse
from django.test import RequestFactory

from apps.audit.context import request_context
from apps.audit.middleware import RequestContextMiddleware
from apps.audit.models import AuditEvent
from apps.audit.services import audit_append
from apps.audit.verify import chain_verify
from apps.corpus.services.importing import corpus_import
from apps.registry.models import ModelVersion
from apps.registry.services import model_activate
from tests.audit.conftest import append, head_seq, tamper
from tests.corpus.conftest import jsonl, statute

pytestmark = pytest.mark.django_db


def test_a_corpus_import_and_two_model_activations_leave_ordered_events(personas):
    start = head_seq()
    batch = corpus_import(data=jsonl(statute(264), statute(266)), filename="statutes.jsonl", user=personas.admin)
    first = ModelVersion.objects.create(kind="charges", model_id="charges-a", artefact_dir="/nonexistent/a")
    second = ModelVersion.objects.create(kind="charges", model_id="charges-b", artefact_dir="/nonexistent/b")
    model_activate(version=first, user=personas.admin)
    model_activate(version=second, user=personas.admin)

    events = list(AuditEvent.objects.filter(seq__gt=start).order_by("seq"))
    assert [e.seq for e in events] == [start + 1, start + 2, start + 3]
    assert [(e.action, e.object_type, e.object_id, e.actor_id, e.actor_username, e.role) for e in events] == [
        ("corpus.import", "corpus.importbatch", str(batch.pk), personas.admin.pk, "admin", "admin"),
        ("model.activate", "registry.modelversion", str(first.pk), personas.admin.pk, "admin", "admin"),
        ("model.activate", "registry.modelversion", str(second.pk), personas.admin.pk, "admin", "admin"),
    ]
    assert batch.status == "published"
    assert events[0].before is None
    assert events[0].after == {"kind": "statute", "filename": "statutes.jsonl", "sha256": batch.sha256, "counts": batch.counts}
    assert events[1].before == {"kind": "charges", "active_id": None}
    assert events[1].after == {"kind": "charges", "active_id": first.pk, "model_id": "charges-a"}
    assert events[2].before == {"kind": "charges", "active_id": first.pk}
    assert events[2].after == {"kind": "charges", "active_id": second.pk, "model_id": "charges-b"}
    assert events[1].prev_hash == events[0].hash and events[2].prev_hash == events[1].hash
    assert chain_verify().ok


def test_an_uploaders_import_run_by_the_worker_is_attributed_to_the_uploader(personas):
    from apps.corpus.services.importing import import_batch_create

    data = jsonl(statute(264))
    batch = import_batch_create(data=data, filename="statutes.jsonl", user=personas.admin)
    corpus_import(data=data, filename="statutes.jsonl", batch=batch)  # as corpus_import_run_batch calls it
    event = AuditEvent.objects.get(seq=head_seq())
    assert (event.action, event.actor_username) == ("corpus.import", "admin")


def test_the_middleware_gives_each_request_an_id_and_the_event_its_actor_ip_and_id(personas):
    seen = {}

    def view(request):
        with transaction.atomic():
            seen["event"] = audit_append(action="test.request", reason="because")
        return HttpResponse("ok")

    request = RequestFactory().post("/x", REMOTE_ADDR="10.1.2.3")
    request.user = personas.reviewer
    response = RequestContextMiddleware(view)(request)
    event = seen["event"]
    assert response["X-Request-ID"] == event.request_id == request.request_id and len(event.request_id) == 36
    assert (event.actor_id, event.actor_username, event.role, event.ip, event.reason) == (
        personas.reviewer.pk, "reviewer", "reviewer", "10.1.2.3", "because")

    sane = RequestFactory().get("/x", HTTP_X_REQUEST_ID="edge-4f2a9c1b")
    sane.user = personas.reviewer
    assert RequestContextMiddleware(view)(sane)["X-Request-ID"] == "edge-4f2a9c1b" == seen["event"].request_id
    for insane in ("short", "x" * 200, "<script>alert(1)</script>", "a b c d e f g h"):
        odd = RequestFactory().get("/x", HTTP_X_REQUEST_ID=insane)
        odd.user = personas.reviewer
        assert RequestContextMiddleware(view)(odd)["X-Request-ID"] != insane


def test_an_explicit_actor_wins_and_tasks_can_open_a_context(personas):
    with request_context(actor=personas.admin, request_id="task-00000001"), transaction.atomic():
        from_context = audit_append(action="test.task")
        explicit = audit_append(action="test.task", actor=personas.staff_a)
    assert (from_context.actor_username, from_context.request_id) == ("admin", "task-00000001")
    assert (explicit.actor_username, explicit.role) == ("staff_a", "staff")
    with transaction.atomic():
        nobody = audit_append(action="test.system")
    assert (nobody.actor_id, nobody.actor_username, nobody.request_id) == (None, "", "")


def test_every_response_carries_a_request_id(personas):
    response = personas.client(personas.reviewer).get("/audit/", HTTP_X_REQUEST_ID="proxy-id-12345678")
    assert response["X-Request-ID"] == "proxy-id-12345678"
    assert len(personas.client().get("/audit/")["X-Request-ID"]) == 36


# --- the page for reviewers and admins ----------------------------------------------------------------

def test_reviewers_and_admins_see_the_trail_and_its_status_staff_and_anonymous_do_not(personas):
    append(2, action="test.visible")
    for user in (personas.reviewer, personas.admin):
        response = personas.client(user, HTTP_ACCEPT_LANGUAGE="en").get("/audit/")
        assert response.status_code == 200
        html = response.content.decode()
        assert "test.visible" in html and "Chain verified" in html
    assert personas.client(personas.staff_a).get("/audit/").status_code == 403
    anonymous = personas.client().get("/audit/")
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]


def test_the_page_shows_the_first_broken_seq(personas):
    events = append(3)
    tamper("UPDATE audit_event SET reason = 'edited' WHERE seq = %s", [events[1].seq])
    html = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en").get("/audit/").content.decode()
    assert f"Chain broken at seq {events[1].seq}" in html


def test_the_page_filters_by_action_and_object_and_keeps_the_filter_when_paging(personas):
    append(2, action="test.other")
    append(51, action="test.many")
    client = personas.client(personas.reviewer)
    html = client.get("/audit/", {"action": "test.other"}).content.decode()
    assert html.count("<td>test.other</td>") == 2 and "<td>test.many</td>" not in html
    html = client.get("/audit/", {"object_type": "test.thing", "object_id": "50"}).content.decode()
    assert html.count("<td>test.many</td>") == 1
    html = client.get("/audit/", {"action": "test.many"}).content.decode()
    assert html.count("<td>test.many</td>") == 50 and "?action=test.many&amp;page=2" in html
    assert client.get("/audit/", {"action": "test.many", "page": 2}).content.decode().count("<td>test.many</td>") == 1


# --- Django admin: read-only --------------------------------------------------------------------------

def test_the_admin_shows_events_read_only(personas):
    event = append(1)[0]
    client = personas.client(personas.admin)
    assert client.get("/admin/audit/auditevent/").status_code == 200
    assert client.get(f"/admin/audit/auditevent/{event.seq}/change/").status_code == 200
    assert client.get("/admin/audit/auditevent/add/").status_code == 403
    assert client.post(f"/admin/audit/auditevent/{event.seq}/change/", {"reason": "x"}).status_code == 403
    assert client.get(f"/admin/audit/auditevent/{event.seq}/delete/").status_code == 403
    assert AuditEvent.objects.get(seq=event.seq).hash == event.hash


def test_case_and_run_changes_are_audited_without_the_facts(personas, django_capture_on_commit_callbacks):
    import datetime as dt
    import hashlib

    from apps.audit.models import AuditEvent
    from apps.cases.services.cases import case_create, case_update
    from apps.cases.services.runs import judgment_request

    start = AuditEvent.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
    facts = "被告人张某于2018年3月翻墙入户窃取现金人民币五千元。"
    case = case_create(user=personas.staff_a, team=personas.team_a, facts=facts, offence_date=dt.date(2018, 3, 1),
                       defendants=["张某"])
    case = case_update(case=case, user=personas.staff_a, title="入户盗窃")
    with django_capture_on_commit_callbacks(execute=False):
        run = judgment_request(case=case, user=personas.staff_a)
    events = list(AuditEvent.objects.filter(seq__gt=start).order_by("seq"))
    assert [e.action for e in events] == ["case.create", "case.update", "run.request"]
    assert events[0].after["facts_sha256"] == hashlib.sha256(facts.encode()).hexdigest()
    assert events[1].after["changed_fields"] == ["title"] and events[1].before["version"] == 1
    assert events[2].object_id == str(run.pk) and events[2].after["case_version"] == 2
    assert all(facts not in str(e.after) and "张某" not in str(e.after) for e in events)
    assert {e.actor_username for e in events} == {"staff_a"}
