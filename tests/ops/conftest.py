"""Fixtures of the operations tests, reused from the cases and core suites."""

from tests.cases.conftest import judged_run, judging_corpus, live  # noqa: F401 - fixtures
from tests.core.test_worker_roundtrip import published  # noqa: F401 - fixture
