"""The review page's item actions answer htmx with the changed fragments only (issue 20, pages): the
control, the what-if, the coverage and the messages, built without the page's evidence view-model, and
they write the same review state and audit event as the plain form post. The page itself reads the
cached evidence view-model and loads its rejected articles, graph and analysis details as parts."""

import re
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.audit.models import AuditEvent
from apps.review.models import ReviewItem, WhatIf
from apps.review.services.reviews import review_for_run, review_item_set
from tests.audit.conftest import head_seq
from tests.review.conftest import first_item

pytestmark = pytest.mark.django_db

CSRF = re.compile(r'(name="csrfmiddlewaretoken" value|nonce)="[^"]*"|"X-CSRFToken": "[^"]*"')


def _rejected_item(run):
    """(result, article, item) of a checklist verdict of an article the Auditor rejected."""
    result = run.results.order_by("position").first()
    article = next(a for a in result.bundle["audit"]["articles"] if not a["passed"] and a["items"])
    return result, article, article["items"][0]


def _control(html: str, dom_id: str) -> str:
    """The control with this id, without the attributes that differ between two renderings."""
    start = html.index(f'id="{dom_id}"')
    start = html.rindex("<div", 0, start)
    end = html.index("</div>", start) + len("</div>")
    return CSRF.sub("", html[start:end]).replace(' hx-swap-oob="true"', "")


def _post(client, run, action, *, htmx, **fields):
    result, article, item = first_item(run)
    data = {"target": "item", "ref": f"{article['article_pk']}:{item['item_pk']}", "position": result.position,
            "version": 1, "action": action, "anchor": f"item-{item['item_pk']}", **fields}
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(reverse("review:item_set", args=[run.pk]), data, **headers)


def test_an_htmx_accept_answers_the_changed_fragments_and_writes_what_a_form_post_writes(judged_run, personas):
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    page_url = reverse("review:review_detail", args=[judged_run.pk])
    client.get(page_url)
    result, article, item = first_item(judged_run)
    ref = f"{article['article_pk']}:{item['item_pk']}"
    seq = head_seq()

    answer = _post(client, judged_run, "accept", htmx=True)
    html = answer.content.decode()
    assert answer.status_code == 200 and "<html" not in html and 'id="decision-form"' not in html
    assert f'data-ref="{ref}"' in html and 'data-state="accept"' in html
    assert 'id="whatif"' in html and 'id="review-coverage"' in html and 'id="flash"' in html
    assert html.count('hx-swap-oob="true"') >= 4
    # Each swapped control is the page's own control, as a reload would show it.
    page = client.get(page_url).content.decode()
    dom_id = f"rc-item-{item['item_pk']}-item-{ref.replace(':', '-')}"
    assert _control(html, dom_id) == _control(page, dom_id)

    htmx_item = ReviewItem.objects.get(ref=ref)
    event = AuditEvent.objects.filter(seq__gt=seq).get()
    assert (htmx_item.action, htmx_item.value, htmx_item.actor) == ("accept", None, personas.reviewer)
    assert event.action == "review.accept" and event.after["ref"] == ref and event.after["action"] == "accept"

    # The same action as a plain form post: the same state and the same kind of event, then a redirect.
    ReviewItem.objects.all().delete()
    seq = head_seq()
    plain = _post(client, judged_run, "accept", htmx=False)
    assert plain.status_code == 302 and plain["Location"].endswith(f"?d={result.position}#item-{item['item_pk']}")
    again = ReviewItem.objects.get(ref=ref)
    plain_event = AuditEvent.objects.filter(seq__gt=seq).get()
    assert (again.action, again.value, again.actor) == (htmx_item.action, htmx_item.value, htmx_item.actor)
    assert (plain_event.action, plain_event.before, plain_event.after) == (event.action, event.before, event.after)


def test_an_item_action_does_not_build_the_pages_evidence_view_model(judged_run, personas):
    from apps.cases import evidence

    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    client.get(reverse("review:review_detail", args=[judged_run.pk]))  # the view-model is cached here
    with mock.patch.object(evidence, "evidence_context", wraps=evidence.evidence_context) as built:
        assert _post(client, judged_run, "accept", htmx=True).status_code == 200
        assert _post(client, judged_run, "override", htmx=True, value="0", reason="no entry shown").status_code == 200
        assert client.get(reverse("review:review_detail", args=[judged_run.pk])).status_code == 200
    assert built.call_count == 0, "the shown defendant's view-model comes from the cache, the what-if's from its bundle"


def test_the_what_if_outcome_follows_every_override_and_undo(judged_run, personas):
    """The cached view-model is the run's; what an override changes is shown from the what-if stored for it."""
    from apps.cases.evidence import evidence_context, outcome_view
    from apps.review.viewmodels import _outcome

    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    url = reverse("review:review_detail", args=[judged_run.pk])
    assert "No override yet" in client.get(url).content.decode()
    result, article, item = first_item(judged_run)
    answer = client.post(reverse("review:item_set", args=[judged_run.pk]), {
        "target": "article", "ref": str(article["article_pk"]), "position": result.position, "version": 1,
        "action": "override", "value": "0", "reason": "the facts show no taking"}, HTTP_HX_REQUEST="true")
    assert "the facts show no taking" in answer.content.decode() and "No override yet" not in answer.content.decode()
    whatif = WhatIf.objects.get(result=result)
    shown = outcome_view(whatif.bundle)
    built = _outcome(evidence_context(whatif.bundle))
    assert shown == {k: built[k] for k in shown}, "the what-if's outcome is what its full view-model would show"
    page = client.get(url).content.decode()
    assert "the facts show no taking" in page and "No override yet" not in page
    undo = ReviewItem.objects.get(result=result, target="article")
    client.post(reverse("review:item_undo", args=[judged_run.pk, undo.pk]), {"version": 1}, HTTP_HX_REQUEST="true")
    assert "No override yet" in client.get(url).content.decode()


def test_the_audit_event_is_appended_after_the_what_if(judged_run, personas):
    """From the append to the commit every audited write waits on the trail's lock: the Adjudicator runs before."""
    result, article, item = first_item(judged_run)
    review = review_for_run(judged_run)
    with CaptureQueriesContext(connection) as queries:
        review_item_set(review=review, result=result, target="item", ref=f"{article['article_pk']}:{item['item_pk']}",
                        action="override", value=False, reason="not shown", user=personas.reviewer)
    sql = [q["sql"] for q in queries.captured_queries]
    whatif_write = max(i for i, s in enumerate(sql) if s.startswith(("INSERT INTO \"review_whatif\"",
                                                                      "UPDATE \"review_whatif\"")))
    lock = next(i for i, s in enumerate(sql) if "pg_advisory_xact_lock" in s)
    assert whatif_write < lock, "the trail's lock is taken after the what-if is written"
    assert WhatIf.objects.filter(result=result).exclude(bundle=None).exists()


def test_the_review_page_loads_its_rejected_articles_as_a_part_with_their_controls(judged_run, personas):
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    url = reverse("review:review_detail", args=[judged_run.pk])
    result, article, item = _rejected_item(judged_run)
    ref = f'data-ref="{article["article_pk"]}:{item["item_pk"]}"'
    page = client.get(url).content.decode()
    assert 'hx-get="?d=0&amp;part=rejected"' in page and 'hx-get="?d=0&amp;part=analysis"' in page
    assert ref not in page and 'id="decision-form"' in page
    part = client.get(url, {"d": result.position, "part": "rejected"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in part and ref in part and 'class="review-control"' in part
    assert ref in client.get(url, {"all": "1"}).content.decode(), "?all=1: the whole page, without JavaScript"
    assert client.get(url, {"part": "graph"}).status_code == 200
    assert client.get(url, {"part": "analysis"}).status_code == 200
    assert client.get(url, {"part": "secret"}).status_code == 404
    # Team scoping and roles hold for the parts as for the page.
    from apps.accounts.models import Role
    from apps.accounts.services import user_create
    from tests.conftest import PASSWORD

    outsider = user_create(username="reviewer_b", password=PASSWORD, roles=[Role.REVIEWER], teams=[personas.team_b])
    assert personas.client(outsider).get(url, {"part": "rejected"}).status_code == 404
    assert personas.client(personas.staff_a).get(url, {"part": "rejected"}).status_code == 403


DATES = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}")


def test_an_item_answer_is_the_fragment_a_fresh_read_gives(judged_run, personas):
    """The htmx answer is built from the results the view read and the what-if the action just wrote
    (review_item_change), not read back: the same fragment as when both are read back (each action is
    posted twice, the state of both posts being the same), for either defendant."""
    from apps.review import views

    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    url = reverse("review:item_set", args=[judged_run.pk])
    real = views.review_item_context
    read_back = []

    def fresh(**kwargs):
        read_back.append((kwargs.pop("results"), kwargs.pop("change")))
        return real(**kwargs)

    steps = [("override", {"value": "0", "reason": "not shown"}), ("override", {"value": "1", "reason": "shown"}),
             ("accept", {})]
    for result in judged_run.results.order_by("position"):
        article = next(a for a in result.bundle["audit"]["articles"] if a["passed"] and a["items"])
        data = {"target": "item", "ref": f"{article['article_pk']}:{article['items'][0]['item_pk']}",
                "position": result.position, "version": 1, "anchor": "x"}
        for action, fields in steps:
            answer = client.post(url, {**data, "action": action, **fields}, HTTP_HX_REQUEST="true").content.decode()
            with mock.patch.object(views, "review_item_context", side_effect=fresh):
                again = client.post(url, {**data, "action": action, **fields}, HTTP_HX_REQUEST="true").content.decode()
            assert read_back[-1][0] is not None and read_back[-1][1] is not None
            assert ("No override yet" in answer) == (action == "accept")
            assert DATES.sub("", CSRF.sub("", answer)) == DATES.sub("", CSRF.sub("", again)), (result.position, action)


def test_an_item_change_returns_the_what_if_it_stored(judged_run, personas):
    from apps.review.services.reviews import review_item_change

    review = review_for_run(judged_run)
    result, article, item = first_item(judged_run)
    ref = f"{article['article_pk']}:{item['item_pk']}"
    other = f"{article['article_pk']}:{article['items'][-1]['item_pk']}"
    common = {"review": review, "result": result, "target": "item", "user": personas.reviewer}

    change = review_item_change(**common, ref=ref, action="override", value=False, reason="not shown")
    stored = WhatIf.objects.get(review=review, result=result)
    assert change.whatif_computed and change.item == ReviewItem.objects.get(ref=ref)
    assert (change.whatif.pk, change.whatif.overrides_sha256, change.whatif.error) == \
        (stored.pk, stored.overrides_sha256, stored.error)
    assert change.whatif.bundle == stored.bundle, "the what-if as written is the one read back"
    # An accept of an item never overridden leaves the what-if alone (and says so).
    if other != ref:
        change = review_item_change(**common, ref=other, action="accept")
        assert not change.whatif_computed and change.whatif is None and WhatIf.objects.filter(pk=stored.pk).exists()
    # Accepting the overridden item removes the what-if: computed, and none.
    change = review_item_change(**common, ref=ref, action="accept")
    assert change.whatif_computed and change.whatif is None and not WhatIf.objects.exists()


def test_an_override_reads_each_stored_bundle_once(judged_run, personas):
    """One Bundle.from_dict of the result for the check of the reference and the what-if, one per
    defendant for the answer's progress and coverage, one of the what-if for its outcome."""
    from worker.agents.types import Bundle

    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    client.get(reverse("review:review_detail", args=[judged_run.pk]))
    n = judged_run.results.count()
    with mock.patch.object(Bundle, "from_dict", wraps=Bundle.from_dict) as read:
        assert _post(client, judged_run, "override", htmx=True, value="0", reason="not shown").status_code == 200
    assert read.call_count == 1 + n + 1
