"""The Researcher: the retrieval paths that gather candidate articles and precedents for one defendant.

``research`` runs the paths ``Params.paths`` selects, each registered in paths.py (semantic precedents
``sem``, the case's community ``com``, the pre-judged charges and their Fact-graph neighbourhood ``chg``,
the articles by hybrid search ``art``); naive RAG runs the ``flat`` path alone, and without the Researcher
only the pre-judged charges' articles are candidates. The fusion and the intent rerank the paths share are
in retrieval.py; the agentic mode replaces this stage with its planner loop (worker/agents/agentic.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from worker.agents.graph_types import ArticleNode, CaseNode, CommunityNode
from worker.agents.ports import GraphStore, Retriever
from worker.agents.stages.auditor import provisions
from worker.agents.stages.researcher import retrieval
from worker.agents.stages.researcher.paths import (
    PATHS,
    Articles,
    CaseCommunity,
    Cases,
    ChargeShares,
    Query,
    RetrievalPath,
)
from worker.agents.types import CaseInput, Hit, Research

if TYPE_CHECKING:
    from worker.agents.pipeline import Params


def is_candidate(article: ArticleNode | None, params: Params, *, companion: bool = False) -> bool:
    """A specific-part article that defines a charge; with ``companion`` also one that defines none (a
    punishment article such as 383 for 382), reached through the precedents that cite it."""
    return article is not None and article.number >= params.specific_part_from and (bool(article.charges) or companion)


def research(case: CaseInput, focus: str, features: dict, query_text: str, prejudged: list[tuple[str, float]], *,
             graph: GraphStore, retriever: Retriever, params: Params,
             intents: retrieval.IntentClassifier | None = None,
             expand: Callable[[str], list[str]] | None = None,
             pick_community: Callable[[str, list[CommunityNode]], int | None] | None = None,
             select_cases: Callable[[str, list[CaseNode]], list[int] | None] | None = None,
             resolve: Callable[[str], list[str]] | None = None) -> Research:
    """The Researcher's paths. ``intents``: the trained intent classifier for the article rerank (else the
    cue rules); ``expand``: IRAC keyword expansion of the sparse article query (LLM strategy only).

    The LLM strategy may also judge two retrieval steps (None = the statistical scores decide):
    ``pick_community`` chooses the community among the ``paths.COMMUNITY_SHORTLIST`` best scored, and
    ``select_cases`` keeps the most similar of the semantic path's ``2k`` candidates (at most 3; none is a
    valid answer). Either returns None when the model could not answer; the scores decide then.
    ``resolve``: the statute charges a pre-judged label stands for (R_chg, when no article defines the label)."""
    result = Research(focus=focus, features=features, query_text=query_text, prejudged=prejudged)
    q = Query(case, focus, features, query_text, prejudged, params, graph, retriever, intents=intents, expand=expand,
              pick_community=pick_community, select_cases=select_cases, resolve=resolve)
    cases: dict[int, list[str]] = {}
    articles: dict[int, list[str]] = {}

    def add_cases(path: str, scored: Iterable[tuple[int, float]]):
        scored = list(scored)
        if params.exclude_self and case.ref:
            graph.cases(pk for pk, _ in scored)  # one batch read for the leave-one-out check
        for pk, score in [(pk, score) for pk, score in scored if not q.is_self(pk)][: params.keep_cases]:
            result.hits.append(Hit(path=path, kind="case", pk=pk, score=round(float(score), 6)))
            cases.setdefault(pk, []).append(path)

    nodes: dict[int, ArticleNode | None] = {}

    def add_articles(path: str, pks: Iterable[int], companion: bool = False):
        pks = list(pks)
        graph.prefetch_articles(pk for pk in pks if pk not in nodes)
        for pk in pks:
            if pk not in nodes:
                nodes[pk] = graph.article(pk)
            if is_candidate(nodes[pk], params, companion=companion):
                articles.setdefault(pk, []).append(path)

    for path in paths_to_run(params):
        for found in path.find(q):
            if isinstance(found, Hit):
                result.hits.append(found)
            elif isinstance(found, Cases):
                add_cases(path.name, found.scored)
            elif isinstance(found, Articles):
                add_articles(path.name, found.pks, found.companion)
            elif isinstance(found, CaseCommunity):
                result.community = found.pk
            elif isinstance(found, ChargeShares):
                result.fact_shares[found.charge] = found.shares
            else:
                raise TypeError(f"retrieval path {path.name!r} yielded {found!r}")
    if not params.use_researcher and not params.naive_rag:  # without the Researcher: the pre-judged charges' articles
        for charge, p in prejudged:
            result.hits.append(Hit(path="chg", kind="charge", pk=charge, score=round(p, 6)))
            add_articles("chg", [a.pk for a in q.defining(charge)])

    graph.prefetch_articles_of_cases(cases)
    for pk, paths in cases.items():
        add_articles("case", [a.pk for a in graph.articles_of_case(pk)], companion=True)
    defining = [nodes[pk] for pk in articles if nodes[pk].charges]
    if provisions.unit_crime_shown(focus):  # the unit-crime provisions whose scope holds a candidate
        add_articles("unit", unit_provisions(defining, graph), companion=True)
    add_articles("definition", definition_provisions(defining, graph), companion=True)
    add_articles("punishment", punishment_provisions(defining, graph), companion=True)
    result.candidate_cases = sorted(cases)
    result.candidate_articles = sorted(articles, key=lambda pk: (nodes[pk].number, nodes[pk].sub))
    result.article_sources = {pk: sorted(set(v)) for pk, v in articles.items()}
    return result


def unit_provisions(defining: list[ArticleNode], graph: GraphStore) -> list[int]:
    """The unit-crime provisions (provisions.unit_scope) that refer to one of the ``defining`` articles and
    whose scope covers it: 150 for 140, 231 for 228."""
    by_pk = {a.pk: a for a in defining}
    referring = graph.referring(by_pk)
    graph.prefetch_articles(node.pk for nodes in referring.values() for node in nodes if not node.charges)
    found = set()
    for pk, referrers in referring.items():
        target = by_pk[pk]
        for node in referrers:
            if node.charges or node.pk in found:
                continue
            texts = graph.article_texts(node.pk)
            scope = provisions.unit_scope(texts[-1].text) if texts else None
            if scope is not None and scope.covers((target.number, target.sub)):
                found.add(node.pk)
    return sorted(found)


def definition_provisions(defining: list[ArticleNode], graph: GraphStore) -> list[int]:
    """The definition provisions (provisions.defined_term) whose term one of the ``defining`` articles uses:
    357 (毒品) for 347."""
    terms = [(node.pk, term) for node, text in graph.opening_with(provisions.DEFINITION_OPENING)
             if (term := provisions.defined_term(text))]
    if not terms or not defining:
        return []
    texts = [t[-1].text for t in (graph.article_texts(a.pk) for a in defining) if t]
    return [pk for pk, term in terms if any(term in text for text in texts)]


def punishment_provisions(defining: list[ArticleNode], graph: GraphStore) -> list[int]:
    """The punishment provisions (provisions.punished_charge) of a charge one of the ``defining`` articles defines,
    and the articles those punish by (provisions.punished_by): 386 and, through it, 383 for 385 (受贿罪)."""
    charges = {charge for a in defining for charge in a.charges}
    if not charges:
        return []
    found = {node.pk: provisions.punished_by(text) for node, text in graph.opening_with(provisions.PUNISHMENT_OPENING)
             if provisions.punished_charge(text) in charges}
    by = {node.pk for pk, keys in found.items() if keys
          for node in graph.references(pk) if (node.number, node.sub) in keys}
    return sorted(set(found) | by)


def paths_to_run(params: Params) -> list[RetrievalPath]:
    """The registered paths ``params`` selects, in the order they were registered: the flat path alone for
    naive RAG, none without the Researcher."""
    if params.naive_rag:
        return [PATHS["flat"]]
    if not params.use_researcher:
        return []
    return [path for name, path in PATHS.items() if name in params.paths]
