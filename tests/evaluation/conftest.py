"""Fixtures for the evaluation pages."""

from tests.graph.conftest import demo_corpus  # noqa: F401
