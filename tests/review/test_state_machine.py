"""B9: arbitrary sequences of review operations never reach an illegal state (hypothesis stateful).

Operations: a run is submitted (a copy of a real finished run, so no step waits for the pipeline),
reviewers and the submitter accept, override, undo, approve, reject and return; someone changes the
evidence under an approval; holds are set and released; cases are deleted. After every step:
no approval without a valid decision of the review's version; no decision by the run's submitter;
at most one decision per review version; every decision has a reason; an approved review's
snapshot still matches once verified; a held case still exists.
"""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from apps.cases.models import Case, DefendantResult, JudgmentRun
from apps.review.models import Decision, Review, ReviewItem
from apps.review.services.holds import CaseHeld, case_delete, hold_active, legal_hold_release, legal_hold_set
from apps.review.services.reviews import (
    ReviewConflict,
    approval_current,
    approval_verify,
    decision_make,
    review_for_run,
    review_item_set,
    review_item_undo,
)
from apps.review.services.snapshot import snapshot_build, snapshot_hash
from tests.cases.conftest import review_complete

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _copy_run(template: JudgmentRun, submitter) -> JudgmentRun:
    case = Case.objects.create(team=template.case.team, title="state-machine case", facts=template.facts,
                               offence_date=template.offence_date, defendants=template.defendants, created_by=submitter)
    run = JudgmentRun.objects.create(case=case, requested_by=submitter, strategy=template.strategy,
                                     ablation=template.ablation, status=JudgmentRun.Status.DONE, case_version=1,
                                     facts=template.facts, defendants=template.defendants,
                                     offence_date=template.offence_date, versions=template.versions)
    for r in template.results.all():
        DefendantResult.objects.create(run=run, position=r.position, defendant=r.defendant, status=r.status,
                                       charges=r.charges, article_keys=r.article_keys, term_months=r.term_months,
                                       life=r.life, death=r.death, bundle=r.bundle)
    return run


class ReviewMachine(RuleBasedStateMachine):
    template = None
    people = None
    seen: set[str] = set()  # outcomes reached over all examples, so the test shows it explored them

    @initialize()
    def start(self):
        self.runs: list[JudgmentRun] = []

    def _actor(self, index):
        return self.people[index % len(self.people)]

    @rule(who=st.integers(0, 3))
    def submit(self, who):
        submitter = self._actor(who)
        if submitter.has_role("staff"):
            self.runs.append(_copy_run(self.template, submitter))

    def _run(self, index):
        live = [r for r in self.runs if Case.objects.filter(pk=r.case_id).exists()]
        return live[index % len(live)] if live else None

    @precondition(lambda self: self.runs)
    @rule(i=st.integers(0, 20), who=st.integers(0, 3), action=st.sampled_from(["accept", "override", "undo"]),
          value=st.booleans(), reason=st.sampled_from(["", "  ", "checked against the record"]))
    def item(self, i, who, action, value, reason):
        run = self._run(i)
        if run is None:
            return
        review = review_for_run(run)
        result = run.results.order_by("position").first()
        article = next((a for a in result.bundle["audit"]["articles"] if a["items"]), None)
        ref = f"{article['article_pk']}:{article['items'][i % len(article['items'])]['item_pk']}"
        try:
            with transaction.atomic():
                if action == "undo":
                    item = ReviewItem.objects.filter(review=review, version=review.version).first()
                    if item:
                        review_item_undo(review=review, item=item, user=self._actor(who))
                else:
                    review_item_set(review=review, result=result, target="item", ref=ref, action=action, value=value,
                                    reason=reason, user=self._actor(who))
        except (PermissionDenied, ValidationError, ReviewConflict):
            pass

    @precondition(lambda self: self.runs)
    @rule(i=st.integers(0, 20), who=st.integers(0, 3), kind=st.sampled_from(["approve", "reject", "return"]),
          reason=st.sampled_from(["", " ", "decided on the evidence"]))
    def decide(self, i, who, kind, reason):
        run = self._run(i)
        if run is None:
            return
        try:
            with transaction.atomic():
                if kind == "approve":  # what an approval needs: every judgment opened, every verified article decided
                    review_complete(run, self._actor(who))
                decision_make(review=review_for_run(run), kind=kind, reason=reason, user=self._actor(who))
            self.seen.add(kind)
        except (PermissionDenied, ValidationError, ReviewConflict):
            pass

    @precondition(lambda self: self.runs)
    @rule(i=st.integers(0, 20))
    def tamper(self, i):
        run = self._run(i)
        if run is None:
            return
        with connection.cursor() as cursor:
            cursor.execute("UPDATE cases_defendantresult SET term_months = coalesce(term_months, 0) + 1 WHERE run_id = %s",
                           [run.pk])

    @precondition(lambda self: self.runs)
    @rule(i=st.integers(0, 20), who=st.integers(0, 3), on=st.booleans())
    def hold(self, i, who, on):
        run = self._run(i)
        if run is None:
            return
        try:
            with transaction.atomic():
                (legal_hold_set if on else legal_hold_release)(case=run.case, reason="litigation", user=self._actor(who))
        except (PermissionDenied, ValidationError):
            pass

    @precondition(lambda self: self.runs)
    @rule(i=st.integers(0, 20), who=st.integers(0, 3))
    def delete(self, i, who):
        run = self._run(i)
        if run is None:
            return
        held = hold_active(run.case) is not None
        try:
            with transaction.atomic():
                case_delete(case=run.case, user=self._actor(who), reason="duplicate")
            assert not held, "a held case was deleted"
            self.seen.add("deleted")
        except CaseHeld:
            self.seen.add("held")
        except (PermissionDenied, ValidationError):
            pass

    @invariant()
    def legal_states(self):
        for run in self.runs:
            review = Review.objects.filter(run_id=run.pk).first()
            if review is None:
                continue
            decisions = list(Decision.objects.filter(review=review))
            versions = [d.version for d in decisions]
            assert len(versions) == len(set(versions)), "two decisions on one review version"
            for d in decisions:
                assert d.reviewer_id != run.requested_by_id, "the submitter decided"
                assert d.reason.strip()
                assert d.version <= review.version
            current = [d for d in decisions if d.version == review.version]
            if review.status == Review.Status.PENDING:
                assert not current, "a pending review has a decision on its version"
            else:
                assert len(current) == 1 and current[0].kind == {"approved": "approve", "rejected": "reject",
                                                                 "returned": "return"}[review.status]
            if review.status == Review.Status.APPROVED:
                assert approval_current(review) is not None
                if approval_verify(review) is not None:
                    self.seen.add("invalidated")
                review.refresh_from_db()
                if review.status == Review.Status.APPROVED:
                    assert snapshot_hash(snapshot_build(review)) == approval_current(review).snapshot_sha256
        for run in self.runs:
            case = Case.objects.filter(pk=run.case_id).first()
            if case is None:
                assert not JudgmentRun.objects.filter(pk=run.pk).exists()


def test_no_sequence_of_review_operations_reaches_an_illegal_state(judged_run, personas, lawyer, reviewer2):
    ReviewMachine.template = judged_run
    ReviewMachine.people = [lawyer, personas.reviewer, reviewer2, personas.staff_a]
    ReviewMachine.TestCase.settings = settings(max_examples=20, stateful_step_count=12, deadline=None,
                                               suppress_health_check=list(HealthCheck))
    ReviewMachine.seen = set()
    ReviewMachine.TestCase().runTest()
    assert {"approve", "reject"} <= ReviewMachine.seen, ReviewMachine.seen
