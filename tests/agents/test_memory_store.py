"""InMemoryGraphStore: every GraphStore method on the tiny legal graph, and its documented orders."""

import datetime as dt
import inspect

import pytest

from worker.agents import ports
from worker.agents.testing.fixtures import AMENDMENT_VIII, tiny_legal_graph
from worker.agents.graph_types import ArticleNode, CaseNode, CommunityNode, Term
from worker.agents.testing.memory_store import InMemoryGraphStore


@pytest.fixture
def graph() -> InMemoryGraphStore:
    return tiny_legal_graph()


def protocol_methods() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(ports.GraphStore).items()
        if callable(member) and not name.startswith("_")
    }


def test_implements_every_method_of_the_protocol_with_the_same_signature():
    methods = protocol_methods()
    assert len(methods) == 21  # catches a protocol grown without this store
    for name, expected in methods.items():
        implementation = getattr(InMemoryGraphStore, name, None)
        assert callable(implementation), f"missing {name}"
        got = inspect.signature(implementation)
        assert [(p.name, p.default, p.kind) for p in got.parameters.values()] == [
            (p.name, p.default, p.kind) for p in expected.parameters.values()
        ], name


def test_fixture_is_fresh_each_time():
    first = tiny_legal_graph()
    first.add_case(999, "EXTRA", charges=("盗窃罪",))
    assert tiny_legal_graph().case(999) is None


# ------------------------------------------------------------------------ Fact graph


def test_case(graph):
    case = graph.case(103)
    assert isinstance(case, CaseNode)
    assert (case.ext_id, case.charges, case.article_pks, case.term) == ("TINY-103", ("盗窃罪",), (5,), Term(months=40))
    assert case.features["behaviour"] == ("入户", "秘密窃取", "多次盗窃", "数额巨大")
    assert graph.case(115).term == Term(life=True)
    assert graph.case(1) is None


def test_cases_of_offence_by_pk_with_limit(graph):
    assert [c.pk for c in graph.cases_of_offence("盗窃罪")] == [101, 102, 103, 104, 105, 106]
    assert [c.pk for c in graph.cases_of_offence("诈骗罪")] == [105, 107, 108, 109, 110]
    assert [c.pk for c in graph.cases_of_offence("诈骗罪", limit=2)] == [105, 107]
    assert graph.cases_of_offence("诈骗罪", limit=0) == []
    assert graph.cases_of_offence("诈骗") == []  # exact names only
    assert graph.cases_of_offence("抢劫罪") == []


def test_articles_of_case_by_pk(graph):
    assert [a.pk for a in graph.articles_of_case(105)] == [5, 6]
    assert [(a.number, a.sub) for a in graph.articles_of_case(112)] == [(67, 0), (133, 1)]
    assert graph.articles_of_case(4242) == []


def test_article_lists_follow_statute_order_not_import_order():
    store = InMemoryGraphStore()
    store.add_article(1, 134, charges=("重大责任事故罪",))
    store.add_article(2, 133, sub=1, charges=("危险驾驶罪",))  # inserted by an amendment: imported later
    store.add_article(3, 133, charges=("交通肇事罪", "危险驾驶罪"))
    store.add_reference(2, 1)
    store.add_reference(2, 3)
    store.add_case(10, "X", charges=("危险驾驶罪", "交通肇事罪", "危险驾驶罪"), article_pks=(1, 2, 3, 2))
    assert [a.pk for a in store.articles_of_case(10)] == [3, 2, 1]
    assert [a.pk for a in store.articles_defining("危险驾驶罪")] == [3, 2]
    assert [a.pk for a in store.references(2)] == [3, 1]
    # edges carry no order: charges and article pks come back sorted and de-duplicated
    assert store.case(10).charges == ("交通肇事罪", "危险驾驶罪")
    assert store.case(10).article_pks == (1, 2, 3)
    assert store.article(3).charges == ("交通肇事罪", "危险驾驶罪")


def test_articles_defining(graph):
    assert [a.pk for a in graph.articles_defining("危险驾驶罪")] == [3]
    assert graph.articles_defining("危险驾驶罪")[0].label == "第一百三十三条之一"
    assert graph.articles_defining("自首") == []


def test_offences_sorted_without_duplicates(graph):
    offences = graph.offences()
    assert offences == sorted(offences)
    assert set(offences) == {"交通肇事罪", "危险驾驶罪", "故意伤害罪", "盗窃罪", "诈骗罪"}


def test_offences_include_charges_no_article_defines():
    store = InMemoryGraphStore()
    store.add_case(1, "X", charges=("抢劫罪",))
    assert store.offences() == ["抢劫罪"]


# -------------------------------------------------------------------- Ontology graph


def test_neighbours_by_score_then_pk(graph):
    assert graph.neighbours(101) == [(103, 0.91), (102, 0.88), (106, 0.88)]  # the 0.88 tie: lower pk first
    assert graph.neighbours(114) == [(115, 0.81), (113, 0.45), (111, 0.41)]
    assert graph.neighbours(4242) == []
    assert all(len(graph.neighbours(pk)) == 3 for pk in range(101, 116))


def test_neighbours_are_directed_but_scores_symmetric(graph):
    assert (104, 0.80) in graph.neighbours(102)
    assert 102 not in [pk for pk, _ in graph.neighbours(104)]  # kNN is not symmetric
    scores = {(a, b): s for a in range(101, 116) for b, s in graph.neighbours(a)}
    assert all(scores.get((b, a), s) == s for (a, b), s in scores.items())  # cosine is


def test_communities_by_pk_with_current_sizes(graph):
    communities = graph.communities()
    assert [c.pk for c in communities] == [1, 2, 3]
    assert [c.size for c in communities] == [6, 4, 3]
    assert all(isinstance(c, CommunityNode) for c in communities)
    assert communities[0].top_charges == ("盗窃罪", "诈骗罪")
    assert communities[0].summary.startswith("本社区共6件案例，主要罪名：盗窃罪（6）")


def test_community_members_and_membership(graph):
    assert graph.community_members(2) == [107, 108, 109, 110]
    assert graph.community_members(99) == []
    assert graph.community_of(105) == 1
    assert graph.community_of(114) is None  # added after the last rebuild
    assert graph.community_of(4242) is None


def test_set_community_moves_a_case(graph):
    graph.set_community(114, 3)
    graph.set_community(105, 2)
    assert graph.community_of(114) == 3
    assert graph.community_members(3) == [111, 112, 113, 114]
    assert graph.community_members(1) == [101, 102, 103, 104, 106]
    assert [c.size for c in graph.communities()] == [5, 5, 4]


# ------------------------------------------------------------------------ Rule graph


def test_article(graph):
    article = graph.article(5)
    assert article == ArticleNode(pk=5, law="中华人民共和国刑法", number=264, sub=0, label="第二百六十四条", charges=("盗窃罪",))
    assert graph.article(1).charges == ()  # 67 自首: general part
    assert graph.article(77) is None


def test_article_texts_oldest_first(graph):
    texts = graph.article_texts(5)
    assert [t.version_pk for t in texts] == [51, 52]
    old, new = texts
    assert old.valid_to == dt.date(2011, 4, 30) and new.valid_from == AMENDMENT_VIII
    assert old.in_force_on(dt.date(2010, 1, 1)) and not new.in_force_on(dt.date(2010, 1, 1))
    assert new.in_force_on(dt.date(2011, 5, 1)) and not old.in_force_on(dt.date(2011, 5, 1))
    assert "入户盗窃" in new.text and "入户盗窃" not in old.text
    assert [t.version_pk for t in graph.article_texts(3)] == [31]
    assert graph.article_texts(77) == []


def test_checklist_current_and_by_version(graph):
    current = graph.checklist(5)
    assert [e.version_pk for e in current] == [52] * 5
    assert [e.order for e in current] == [1, 2, 3, 4, 5]
    assert "入户盗窃" in current[3].question
    old = graph.checklist(5, 51)
    assert [e.order for e in old] == [1, 2, 3] and all(e.version_pk == 51 for e in old)
    assert graph.checklist(5, 61) == []  # a version of another article
    assert graph.checklist(5, 999) == []
    assert graph.checklist(77) == []
    for article in (1, 2, 3, 4, 6):
        assert 3 <= len(graph.checklist(article)) <= 5


def test_checklist_of_a_repealed_article_is_its_latest_version():
    store = InMemoryGraphStore()
    store.add_article(1, 100)
    store.add_article_text(10, 1, "old", valid_to=dt.date(2000, 1, 1))
    store.add_article_text(11, 1, "later", valid_from=dt.date(2000, 1, 2), valid_to=dt.date(2010, 1, 1))
    store.add_checklist(10, ["a"])
    store.add_checklist(11, ["b", "c"])
    assert [e.question for e in store.checklist(1)] == ["b", "c"]


def test_interpretations_by_pk(graph):
    assert [i.pk for i in graph.interpretations(5)] == [1]
    assert [i.pk for i in graph.interpretations(3)] == [3]
    assert [i.pk for i in graph.interpretations(2)] == [3]
    assert graph.interpretations(1) == []
    assert graph.interpretations(6)[0].para == "第一条"


def test_references_are_outgoing(graph):
    assert [a.pk for a in graph.references(3)] == [2]
    assert graph.references(2) == []


def test_referring_gives_the_incoming_references_of_each_article_asked(graph):
    assert {pk: [a.pk for a in nodes] for pk, nodes in graph.referring([2, 3, 5]).items()} == {2: [3]}
    assert graph.referring([]) == {}


# ------------------------------------------------------------------------- builders


def test_builders_refuse_duplicates_and_dangling_references():
    store = InMemoryGraphStore()
    store.add_article(1, 264, charges=("盗窃罪",))
    with pytest.raises(ValueError, match="already exists"):
        store.add_article(1, 266)
    with pytest.raises(KeyError):
        store.add_article_text(10, 2, "x")
    with pytest.raises(ValueError, match="before"):
        store.add_article_text(10, 1, "x", valid_from=dt.date(2020, 1, 1), valid_to=dt.date(2019, 1, 1))
    with pytest.raises(KeyError):
        store.add_case(5, "C", article_pks=(9,))
    store.add_case(5, "C", article_pks=(1,))
    with pytest.raises(ValueError, match="itself"):
        store.add_similarity(5, 5, 1.0)
    with pytest.raises(KeyError):
        store.add_similarity(5, 6, 1.0)
    with pytest.raises(KeyError):
        store.set_community(5, 1)
    with pytest.raises(KeyError):
        store.add_interpretation(1, "s", "p", "t", [2])
    with pytest.raises(KeyError):
        store.add_checklist(99, ["q"])


def test_add_similarity_replaces_the_score():
    store = InMemoryGraphStore()
    store.add_case(1, "a")
    store.add_case(2, "b")
    store.add_similarity(1, 2, 0.5)
    store.add_similarity(1, 2, 0.7)
    assert store.neighbours(1) == [(2, 0.7)]
    assert store.neighbours(2) == []
