"""B7: two reviewers deciding the same run at the same moment (separate connections, a barrier):
exactly one decision is recorded, the other reviewer gets a conflict."""

import threading

import pytest
from django.db import connection, transaction

from apps.review.models import Decision, Review
from apps.review.services.reviews import ReviewConflict, decision_make, review_for_run
from tests.review.conftest import make_case, make_run, review_complete


def _purge(case_pk: int) -> None:
    # Decisions refuse deletion outside the retention purge (their trigger): clean up as it does.
    from apps.cases.models import Case

    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lextrace.purge = 'on'")
        Case.objects.filter(pk=case_pk).delete()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kinds", [("approve", "reject"), ("approve", "approve")])
def test_two_reviewers_deciding_at_once_get_one_success_and_one_conflict(live, kinds):
    from apps.accounts.models import Role, User
    from apps.accounts.services import user_create
    from apps.cases.services.runs import judgment_execute

    reviewers = [user_create(username=f"{live.staff_a.username}_r{i}", password="x-password-1", roles=[Role.REVIEWER],
                             teams=[live.team_a]) for i in range(2)]
    case = make_case(live.staff_a, live.team_a)
    run = make_run(case, live.staff_a)
    try:
        assert judgment_execute(run_id=run.pk, worker="test") == "done"
        run.refresh_from_db()
        review = review_for_run(run)
        for reviewer in reviewers:
            review_complete(run, reviewer)
        barrier = threading.Barrier(2)
        outcomes, errors = [], []

        def decide(user, kind):
            try:
                barrier.wait(timeout=30)
                decision_make(review=Review.objects.get(pk=review.pk), kind=kind, reason=f"{kind} by {user.username}",
                              user=user, version=1)
                outcomes.append("ok")
            except ReviewConflict:
                outcomes.append("conflict")
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=decide, args=(u, k)) for u, k in zip(reviewers, kinds)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        assert sorted(outcomes) == ["conflict", "ok"]
        assert Decision.objects.filter(review=review).count() == 1
        review.refresh_from_db()
        assert review.status == {"approve": "approved", "reject": "rejected"}[Decision.objects.get(review=review).kind]
    finally:
        _purge(case.pk)
        User.objects.filter(pk__in=[u.pk for u in reviewers]).delete()
