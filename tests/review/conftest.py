"""Fixtures for review tests: a finished run of the demo case (from tests/cases) and reviewers."""

import pytest

from tests.cases.conftest import (  # noqa: F401
    compiled_catalogs,
    judged_run,
    judging_corpus,
    live,
    make_case,
    make_run,
    review_complete,
)
from tests.conftest import PASSWORD


@pytest.fixture
def reviewer2(personas):
    """A second reviewer of team A (two reviewers deciding at once)."""
    from apps.accounts.models import Role
    from apps.accounts.services import user_create

    return user_create(username="reviewer2", password=PASSWORD, roles=[Role.REVIEWER], teams=[personas.team_a])


@pytest.fixture
def lawyer(personas):
    """A senior lawyer of team A holding both roles: may submit runs and review others' runs."""
    from apps.accounts.models import Role
    from apps.accounts.services import user_create

    return user_create(username="lawyer", password=PASSWORD, roles=[Role.STAFF, Role.REVIEWER], teams=[personas.team_a])


def first_item(run):
    """(result, target, ref) of the first checklist verdict of the first defendant's verified article."""
    result = run.results.order_by("position").first()
    article = next(a for a in result.bundle["audit"]["articles"] if a["passed"] and a["items"])
    return result, article, article["items"][0]
