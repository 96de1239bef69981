"""The statistical pipeline end to end against the real graph (AGE) and indexes (pgvector, BM25)."""

import datetime as dt

import pytest

from apps.corpus.models import Precedent
from apps.corpus.services.indexing import search_indexes_build
from apps.graph.services.building import graph_build
from apps.judging.services import judgment_compute
from worker.agents.types import CaseInput, Status

pytestmark = pytest.mark.django_db

NEW_THEFT = ("公诉机关指控：2018年5月，被告人张某趁夜翻墙进入被害人家中，窃取现金人民币五千元及手机一部。"
             "案发后张某主动投案，如实供述。")


@pytest.fixture
def built(demo_corpus):
    search_indexes_build()
    graph_build()


def test_a_new_theft_is_judged_under_the_article_in_force(built):
    [bundle] = judgment_compute(case=CaseInput(facts=NEW_THEFT, defendants=("张某",), offence_date=dt.date(2018, 5, 1)))
    j = bundle.judgment
    assert j.status == Status.JUDGED, j.message
    assert "盗窃罪" in j.charges and "264" in j.article_keys
    theft = next(a for a in bundle.audit.articles if a.key == "264")
    assert theft.in_force and theft.passed
    # no trained models here: R_chg has no pre-judged charge, and every other default path runs
    assert {h.path for h in bundle.research.hits} >= {"sem", "com", "art"}
    assert all(e.pk for e in j.evidence) and j.citations


def test_the_two_defendant_showcase_gets_one_judgment_each(built):
    p = Precedent.objects.get(ext_id="demo-case-001")
    bundles = judgment_compute(case=CaseInput(facts=p.fact, defendants=tuple(p.defendants), offence_date=dt.date(2018, 6, 1)))
    assert [b.defendant for b in bundles] == list(p.defendants)
    for b in bundles:
        assert b.judgment.status in set(Status), b.judgment
        if b.judgment.ok:
            assert b.judgment.citations
