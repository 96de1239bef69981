"""F7 (tier C): nothing of one team's matter is retrieved for another's.

Case files are never indexed: retrieval covers the published corpus only, so two
teams filing near-duplicate facts each get precedents from the corpus and never
each other's case. The dense search filters by index in SQL through a partial
HNSW index per search index, so the filter cannot shrink an ANN answer below k
even while an older index's vectors share the table.
"""

import datetime as dt
import json

import pytest

from apps.cases.models import Case, DefendantResult
from apps.cases.services.runs import judgment_execute, judgment_request
from apps.corpus.models import DenseVector, Precedent, SearchIndex
from apps.corpus.search_service import active_index, dense_search, dense_search_vector, query_vector
from apps.corpus.services.indexing import search_indexes_build
from tests.cases.conftest import demo_case, ensure_judging_corpus

pytestmark = [pytest.mark.c, pytest.mark.slow]


@pytest.mark.django_db(transaction=True)
def test_f7_near_duplicate_matters_of_two_teams_never_retrieve_each_other(personas):
    from apps.cases.services.cases import case_create

    ensure_judging_corpus()
    vectors_before = DenseVector.objects.count()
    record = demo_case("demo-case-001")
    cases = {}
    for team, user, name in ((personas.team_a, personas.staff_a, "甲某某"), (personas.team_b, personas.staff_b, "乙某某")):
        facts = record["fact"].replace(record["defendants"][0], name)
        cases[team.pk] = case_create(user=user, team=team, facts=facts, offence_date=dt.date(2018, 9, 14),
                                     defendants=[name], title=f"F7 {name}")
    runs = {}
    for team, user in ((personas.team_a, personas.staff_a), (personas.team_b, personas.staff_b)):
        run = judgment_request(case=cases[team.pk], user=user)
        judgment_execute(run_id=run.pk, worker="test")
        runs[team.pk] = run
    # Filing cases indexed nothing.
    assert DenseVector.objects.count() == vectors_before
    published = set(Precedent.objects.values_list("pk", flat=True))
    for team, other in ((personas.team_a, personas.team_b), (personas.team_b, personas.team_a)):
        (result,) = DefendantResult.objects.filter(run=runs[team.pk])
        text = json.dumps(result.bundle, ensure_ascii=False)
        other_case = cases[other.pk]
        assert other_case.defendants[0] not in text  # the other team's defendant appears nowhere
        case_hits = [h["pk"] for h in result.bundle["research"]["hits"] if h["kind"] == "case"]
        assert case_hits, "the run retrieved no precedent at all; the check would prove nothing"
        assert set(case_hits) <= published
    assert Case.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_index_filter_never_returns_fewer_than_k_while_old_vectors_share_the_table():
    ensure_judging_corpus()
    search_indexes_build()  # a second generation: the previous vectors stay in the table, inactive
    for target in ("articles", "precedents"):
        index = active_index(target, SearchIndex.Method.DENSE)
        older = SearchIndex.objects.filter(target=target, method="dense", active=False, status="ready")
        assert older.exists() and DenseVector.objects.filter(index__in=older).exists()
        k = index.documents
        found = query_vector(target=target, query="被告人秘密窃取他人财物")[1]
        approximate = dense_search_vector(index, found, k=k)
        exact = dense_search_vector(index, found, k=k, exact=True)
        ids = set(DenseVector.objects.filter(index=index).values_list("object_id", flat=True))
        assert len(approximate) == k == len(ids)
        assert {pk for pk, _s in approximate} == {pk for pk, _s in exact} == ids
        assert len(dense_search(target=target, query="盗窃", k=k + 50)) == k
