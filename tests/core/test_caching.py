"""Derived data in the shared cache (apps/core/caching.py): a value is derived once per key, a new
generation of the corpus derives it again, and an unreachable cache costs the computation, never the page."""

from unittest import mock

import pytest
import redis
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from apps.core import caching
from apps.core.caching import cached, derived_key, generation, generation_bump

pytestmark = pytest.mark.django_db


def test_a_value_is_derived_once_per_key_and_comes_back_as_a_copy():
    key = derived_key("test-value", "a")
    cache.delete(key)
    computed = []

    def compute():
        computed.append(1)
        return {"rows": [1, 2]}

    first = cached(key, compute)
    first["rows"].append(3)  # a caller may change what it got
    assert cached(key, compute) == {"rows": [1, 2]} and len(computed) == 1


def test_a_new_generation_names_new_keys_and_the_database_is_part_of_them():
    before = generation()
    key = derived_key("test-value", "a")
    assert generation() == before and settings.DATABASES["default"]["NAME"] in key
    with transaction.atomic():
        generation_bump()
        during = generation()
        assert during != before, "advanced at once: a reader in the same transaction derives again"
    assert generation() not in (before,) and derived_key("test-value", "a") != key
    assert derived_key("test-value", "a", generation_of=None).split(":")[3] == "-"


def test_an_unreachable_cache_costs_the_computation_not_the_page():
    down = redis.ConnectionError("Redis is down")
    with mock.patch.object(caching.cache, "get", side_effect=down), \
            mock.patch.object(caching.cache, "set", side_effect=down), \
            mock.patch.object(caching.cache, "add", side_effect=down):
        assert generation() == "uncached"
        assert cached(derived_key("test-value", "b"), lambda: 42) == 42
        generation_bump()  # nothing to advance, nothing raised



def test_an_edit_in_the_corpus_admin_advances_the_generation():
    from django.contrib import admin

    from apps.corpus import admin as corpus_admin
    from apps.corpus import models

    registered = [a for model, a in admin.site._registry.items() if model._meta.app_label == "corpus"]
    assert registered and all(isinstance(a, corpus_admin.DerivedDataFollows) for a in registered)
    before = generation()
    admin.site._registry[models.Law].delete_queryset(None, models.Law.objects.none())
    assert generation() != before
