"""The ontology graph: built from the corpus, reproducible, and kept current by imports."""

import pytest

from apps.corpus.models import Precedent
from apps.corpus.services.importing import corpus_import
from apps.graph.models import CaseFeatures, Community, CommunityMembership, GraphBuild, Similarity
from apps.graph.services.building import graph_build
from apps.graph.services.projection import graph_consistency
from apps.graph.store import AgeGraphStore
from tests.corpus.conftest import case, jsonl

pytestmark = pytest.mark.django_db


def membership():
    return sorted(CommunityMembership.objects.values_list("precedent__ext_id", "community__number"))


def test_a_build_gives_every_case_features_neighbours_and_a_community(demo_corpus):
    build = graph_build(k=3)
    assert build.status == "done"
    n = Precedent.objects.count()
    assert CaseFeatures.objects.count() == n
    assert Similarity.objects.count() == 3 * n
    assert CommunityMembership.objects.count() == n
    assert Community.objects.count() >= 2
    assert graph_consistency() == {}
    stats = build.stats["communities"]
    assert stats["communities"] == Community.objects.count()
    assert 0 <= stats["top_charge_share_pct"] <= 100
    assert set(build.timings) >= {"features", "embed", "knn", "leiden", "project"}
    store = AgeGraphStore()
    some = Precedent.objects.first()
    assert len(store.neighbours(some.pk)) == 3
    assert store.community_of(some.pk) is not None
    assert all(c.summary.startswith("本社区共") for c in store.communities())


def test_the_same_seed_gives_the_same_communities(demo_corpus):
    graph_build(seed=7)
    first = membership()
    graph_build(seed=7)
    assert membership() == first


def test_importing_cases_after_a_build_extends_the_graph_without_rebuilding(demo_corpus):
    graph_build()
    builds = GraphBuild.objects.count()
    data = jsonl(case("new-1", fact="被告人甲某趁被害人不备，从其挎包内窃取苹果手机一部，价值人民币四千元。"),
                 case("new-2", fact="被告人乙某入户盗窃现金人民币二千元，后主动投案，如实供述。"))
    batch = corpus_import(data=data, filename="cases.jsonl")
    assert batch.status == "published", batch.errors
    assert GraphBuild.objects.count() == builds
    for ext_id in ("new-1", "new-2"):
        p = Precedent.objects.get(ext_id=ext_id)
        assert p.ontology.features.exists()
        assert p.similar_out.count() == 3
        assert CommunityMembership.objects.filter(precedent=p, assigned="incremental").exists()
    assert graph_consistency() == {}
