"""Chaos (tier N) fixtures: committed data for work done by other processes."""

from tests.cases.conftest import live  # noqa: F401 - fixture
