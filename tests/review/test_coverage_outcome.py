"""A review cannot be rubber-stamped (issue 21, point 2) and the reviewed outcome is the outcome
(point 3): approval needs every defendant's judgment opened by the deciding reviewer and every
verified article decided (individually or by a recorded "accept the rest"); after the decision the run
page, the case list, the CSV, the API and the memo show the reviewed result beside the machine's."""

import csv
import io
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import translation
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from apps.review.models import ReviewItem, ReviewOpening
from apps.review.services.reviews import (
    decision_make,
    review_accept_rest,
    review_coverage,
    review_for_run,
    review_item_set,
    review_open,
)

pytestmark = pytest.mark.django_db


def _verified(result):
    return [a for a in result.bundle["audit"]["articles"] if a["passed"]]


@pytest.fixture
def english():
    with translation.override("en"):
        yield


def test_an_approval_is_refused_until_every_judgment_is_opened_and_every_article_decided(judged_run, personas,
                                                                                          english):
    review = review_for_run(judged_run)
    first, second = judged_run.results.order_by("position")
    with pytest.raises(ValidationError, match="open the judgment for 王某"):
        decision_make(review=review, kind="approve", reason="looks fine", user=personas.reviewer)
    review_open(review=review, result=first, user=personas.reviewer)
    article = _verified(first)[0]
    review_item_set(review=review, result=first, target="article", ref=str(article["article_pk"]), action="accept",
                    user=personas.reviewer)
    coverage = review_coverage(review, personas.reviewer)
    assert coverage["rows"][0]["opened"] and coverage["rows"][0]["decided"] == 1 and not coverage["complete"]
    with pytest.raises(ValidationError) as refused:
        decision_make(review=review, kind="approve", reason="looks fine", user=personas.reviewer)
    assert "赵某" in str(refused.value), "the second defendant was never opened"
    with pytest.raises(ValidationError, match="Open 赵某"):
        review_accept_rest(review=review, result=second, user=personas.reviewer)
    for result in (first, second):
        review_open(review=review, result=result, user=personas.reviewer)
        review_accept_rest(review=review, result=result, user=personas.reviewer)
    coverage = review_coverage(review, personas.reviewer)
    assert coverage["complete"] and coverage["decided"] == coverage["articles"] == sum(
        len(_verified(r)) for r in (first, second))
    bulk = ReviewItem.objects.filter(review=review, bulk=True)
    assert bulk.count() == coverage["articles"] - 1, "the one decided individually is not re-accepted"
    # "Accept the rest" is recorded where something was left: 王某's one article was accepted by itself.
    left = (len(_verified(first)) > 1) + (len(_verified(second)) > 0)
    assert AuditEvent.objects.filter(action="review.accept_rest").count() == left
    # A reject or a return needs no coverage; a second reviewer's coverage is their own.
    assert not review_coverage(review, personas.admin)["rows"][0]["opened"]
    decision = decision_make(review=review, kind="approve", reason="all verified articles checked",
                             user=personas.reviewer)
    assert len(decision.snapshot_sha256) == 64


def test_the_review_page_records_what_was_opened_and_shows_the_coverage(judged_run, personas):
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    url = reverse("review:review_detail", args=[judged_run.pk])
    opened = reverse("review:opened", args=[judged_run.pk])
    # The GET writes nothing: the page posts the opening of the judgment it shows (htmx on load).
    page = client.get(url).content.decode()
    assert 'id="review-opened"' in page and 'hx-trigger="load"' in page and not ReviewOpening.objects.exists()
    fragment = client.post(opened, {"position": 0}, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="review-coverage"' in fragment and "<html" not in fragment
    page = client.get(url).content.decode()
    assert 'id="review-coverage"' in page and 'data-complete="0"' in page and "1 of 2 defendants" in page
    assert ReviewOpening.objects.filter(reviewer=personas.reviewer).count() == 1
    assert client.post(opened, {"position": 1}).status_code == 302
    personas.client(judged_run.requested_by).post(opened, {"position": 0})  # the submitter (a 403) opens nothing
    assert ReviewOpening.objects.count() == 2
    for position in (0, 1):
        client.post(reverse("review:accept_rest", args=[judged_run.pk]), {"position": position, "version": 1})
    assert 'data-complete="1"' in client.get(url).content.decode()


def test_an_item_action_answers_htmx_with_fragments_not_a_page(judged_run, personas):
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    client.get(reverse("review:review_detail", args=[judged_run.pk]))
    result = judged_run.results.order_by("position").first()
    article = _verified(result)[0]
    response = client.post(reverse("review:item_set", args=[judged_run.pk]), {
        "target": "article", "ref": str(article["article_pk"]), "position": 0, "version": 1, "action": "override",
        "value": "0", "reason": "the facts show no taking", "anchor": f"art-{article['key']}"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert html.count('hx-swap-oob="true"') >= 4, "controls, what-if, coverage and messages are swapped in place"
    assert 'id="whatif"' in html and "the facts show no taking" in html and 'id="review-coverage"' in html
    assert f'data-ref="{article["article_pk"]}"' in html and 'data-state="override"' in html
    refused = client.post(reverse("review:item_set", args=[judged_run.pk]), {
        "target": "article", "ref": str(article["article_pk"]), "position": 0, "version": 1, "action": "override",
        "value": "1", "reason": " "}, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="flash"' in refused and "A reason is required." in refused


def _strike_a_charge_and_approve(run, reviewer):
    """Strike one verified article (and so its charge) for every defendant it was verified for, then approve."""
    review = review_for_run(run)
    # The defendant with two verified articles (demo-case-001: 赵某, theft and fraud): an article of a charge
    # judged is struck, so the what-if judges by the other one; one verified for no other defendant where there is
    # one (王某's only article is theft's: struck, he would be left with no charge).
    results = list(run.results.order_by("position"))
    candidates = [(r, a) for r in results if len(_verified(r)) > 1
                  for a in _verified(r) if a["charges"] and set(a["charges"]) <= set(r.charges)]
    first, article = next(((r, a) for r, a in candidates
                           if sum(any(b["article_pk"] == a["article_pk"] for b in _verified(o)) for o in results) == 1),
                          candidates[0])
    for result in run.results.order_by("position"):
        if any(a["article_pk"] == article["article_pk"] for a in _verified(result)):
            review_item_set(review=review, result=result, target="article", ref=str(article["article_pk"]),
                            action="override", value=False, reason="no deception in the record", user=reviewer)
    for result in run.results.order_by("position"):
        review_open(review=review, result=result, user=reviewer)
        review_accept_rest(review=review, result=result, user=reviewer)
    decision_make(review=review, kind="approve", reason="one charge struck", user=reviewer)
    return first, article


def test_the_reviewed_outcome_reaches_the_clerk_the_list_the_csv_and_the_api(judged_run, personas):
    first, article = _strike_a_charge_and_approve(judged_run, personas.reviewer)
    struck = set(article["charges"])
    assert struck <= set(first.charges)
    clerk = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    run_page = clerk.get(reverse("cases:run_detail", args=[judged_run.pk])).content.decode()
    assert 'id="review-state"' in run_page and "approved" in run_page and "one charge struck" in run_page
    assert 'class="reviewed"' in run_page and "as reviewed" in run_page
    reviewed_cell = run_page.split('class="reviewed-charges">')[1].split("<")[0]
    assert not struck & set(reviewed_cell.split("、")), "the reviewed charges leave the struck one out"
    listing = clerk.get(reverse("cases:case_list")).content.decode()
    row = listing.split("alpha-marker")[1].split("</tr>")[0]
    assert "<del" in row and all(c in row.split("<del")[1] for c in struck), "the struck charge is shown struck"
    rows = list(csv.DictReader(io.StringIO(clerk.get(reverse("cases:case_export")).content.decode("utf-8-sig"))))
    mine = next(r for r in rows if "alpha-marker" in r["title"])
    assert mine["review_status"] == "approved" and not struck & set(mine["reviewed_charges"].split("、"))
    assert set(mine["latest_charges"].split("、")) >= struck
    assert mine["latest_terms"].startswith("王某：") and mine["reviewed_terms"].startswith("王某：")
    assert any(word in mine["latest_terms"] for word in ("fixed-term imprisonment", "criminal detention"))
    api = APIClient()
    api.force_authenticate(personas.staff_a)
    out = api.get(f"/api/v1/runs/{judged_run.pk}/").json()
    assert out["review"]["status"] == "approved" and out["review"]["decision"] == "approve"
    reviewed = next(r for r in out["review"]["results"] if r["position"] == first.position)
    assert reviewed["changed"] and reviewed["overrides"] == 1 and not struck & set(reviewed["charges"])
    assert any(word in out["results"][0]["term_text"] for word in ("fixed-term imprisonment", "criminal detention",
                                                                  "有期徒刑", "拘役"))


def test_the_memo_has_a_court_header_the_verified_basis_only_and_a_signature_block(judged_run, personas, settings):
    settings.COURT_NAME = "清溪市北岭区人民法院"
    first, article = _strike_a_charge_and_approve(judged_run, personas.reviewer)
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = client.get(reverse("review:memo_preview", args=[judged_run.pk])).content.decode()
    assert "清溪市北岭区人民法院" in html and f"LX-" in html and 'id="signature"' in html
    basis = html.split('id="signature"')[0]
    rejected = [a for a in first.bundle["audit"]["articles"] if not a["passed"]]
    # (a label followed by 之 is another article: 第一百三十三条之一 is not 第一百三十三条)
    assert rejected and not any(re.search(f"依据: {re.escape(a['label'])}(?!之)", basis)
                                for a in rejected), "pruned articles are not part of the basis"
    appendix = html.split('id="appendix"')[1]
    assert all(a["label"] in appendix for a in rejected), "they are listed as considered and rejected"
    assert article["label"] in appendix, "the article the reviewer struck is rejected in the reviewed outcome"
    assert "有期徒刑" in html or "拘役" in html, "the term as a judgment writes it"
    # beside the reviewed outcome of the defendant whose charge was struck (赵某, the second), the machine's
    assert f'id="machine-outcome-{first.position + 1}"' in html, "the machine's outcome beside the reviewed one"
    # what each judged defendant's term stands on, as on the evidence page, without the page's ids and anchors
    judged = [r for r in judged_run.results.order_by("position") if r.judged]
    assert html.count("量刑依据") == len(judged) and "刑期的得出" in html and 'id="term-basis"' not in html
