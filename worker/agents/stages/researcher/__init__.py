"""The Researcher: the retrieval paths that gather candidate articles and precedents for one defendant.

``research`` runs the paths ``Params.paths`` names (semantic precedents, the case's community, the pre-judged
charges and their Fact-graph neighbourhood, the articles by hybrid search); naive RAG runs one flat search
instead, and without the Researcher only the pre-judged charges' articles are candidates. The fusion and the
intent rerank the paths share are in retrieval.py; the agentic mode replaces this stage with its planner loop
(worker/agents/agentic.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from worker.agents.graph_types import ArticleNode, CaseNode, CommunityNode
from worker.agents.ports import GraphStore, Retriever
from worker.agents.stages.researcher import retrieval
from worker.agents.types import CaseInput, Hit, Research

if TYPE_CHECKING:
    from worker.agents.pipeline import Params


def _cite_shares(cases, floor: float = 0.05) -> dict[int, float]:
    """Article pk → share of ``cases`` citing it (shares below ``floor`` left out)."""
    counts: dict[int, int] = {}
    for case in cases:
        for pk in set(case.article_pks):
            counts[pk] = counts.get(pk, 0) + 1
    return {pk: round(n / len(cases), 4) for pk, n in sorted(counts.items()) if n / len(cases) >= floor} if cases else {}


def _most_cited(cases, n: int) -> list[int]:
    counts: dict[int, int] = {}
    for case in cases:
        for pk in case.article_pks:
            counts[pk] = counts.get(pk, 0) + 1
    return [pk for pk, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def is_candidate(article: ArticleNode | None, params: Params, *, companion: bool = False) -> bool:
    """A specific-part article that defines a charge; with ``companion`` also one that defines none (a
    punishment article such as 383 for 382), reached through the precedents that cite it."""
    return article is not None and article.number >= params.specific_part_from and (bool(article.charges) or companion)


def research(case: CaseInput, focus: str, features: dict, query_text: str, prejudged: list[tuple[str, float]], *,
             graph: GraphStore, retriever: Retriever, params: Params,
             intents: retrieval.IntentClassifier | None = None,
             expand: Callable[[str], list[str]] | None = None,
             pick_community: Callable[[str, list[CommunityNode]], int | None] | None = None,
             select_cases: Callable[[str, list[CaseNode]], list[int] | None] | None = None) -> Research:
    """The Researcher's paths. ``intents``: the trained intent classifier for the article rerank (else the
    cue rules); ``expand``: IRAC keyword expansion of the sparse article query (LLM strategy only).

    The LLM strategy may also judge two retrieval steps (None = the statistical scores decide):
    ``pick_community`` chooses the community among the ``COMMUNITY_SHORTLIST`` best scored, and
    ``select_cases`` keeps the most similar of the semantic path's ``2k`` candidates (at most 3; none is a
    valid answer). Either returns None when the model could not answer; the scores decide then."""
    result = Research(focus=focus, features=features, query_text=query_text, prejudged=prejudged)
    cases: dict[int, list[str]] = {}
    articles: dict[int, list[str]] = {}

    def is_self(pk: int) -> bool:
        if not (params.exclude_self and case.ref):
            return False
        node = graph.case(pk)
        return node is not None and case.left_out(node.ext_id)

    def add_cases(path: str, scored: Iterable[tuple[int, float]]):
        scored = list(scored)
        if params.exclude_self and case.ref:
            graph.cases(pk for pk, _ in scored)  # one batch read for the leave-one-out check
        for pk, score in [(pk, score) for pk, score in scored if not is_self(pk)][: params.keep_cases]:
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

    if params.naive_rag:
        add_cases("flat", retriever.flat_cases(focus, params.k))
        fused = retrieval.fuse(dict(retriever.articles_sparse(focus, params.k)), dict(retriever.articles_dense(focus, params.k)),
                               alpha=params.alpha)
        for pk, score in retrieval.top(fused.items(), params.k):
            result.hits.append(Hit(path="flat", kind="article", pk=pk, score=round(score, 6)))
            add_articles("flat", [pk])
    elif params.use_researcher:
        if "sem" in params.paths:
            if params.use_graph and select_cases is not None:
                add_cases("sem", _llm_selected_cases(query_text, focus, retriever, graph, params, select_cases, is_self))
            else:
                add_cases("sem", retriever.similar_cases(query_text, params.k) if params.use_graph
                          else retriever.flat_cases(focus, params.k))
        if "com" in params.paths and params.use_graph:
            best = _community_choice(query_text, focus, retriever, graph, pick_community)
            if best:
                result.community = best[0][0]
                result.hits.append(Hit(path="com", kind="community", pk=best[0][0], score=round(best[0][1], 6),
                                       label="chosen by the model" if pick_community else ""))
                members = graph.community_members(best[0][0])
                add_cases("com", retriever.case_scores(query_text, members)[: params.k])
        if "chg" in params.paths:
            for n, (charge, p) in enumerate(prejudged):
                result.hits.append(Hit(path="chg", kind="charge", pk=charge, score=round(p, 6)))
                add_articles("chg", [a.pk for a in graph.articles_defining(charge)])
                if params.use_graph and n < params.graph_charges:
                    # The charge's Fact-graph neighbourhood: its cases and the articles they cite
                    # (this also reaches articles for dataset charge names no article defines, and the
                    # punishment articles that go with a charge).
                    offence_cases = [c for c in graph.cases_of_offence(charge, limit=200) if not is_self(c.pk)]
                    result.fact_shares[charge] = _cite_shares(offence_cases)
                    add_articles("chg", _most_cited(offence_cases, 2), companion=True)
                    add_cases("chg", retriever.case_scores(query_text, [c.pk for c in offence_cases])[: params.k])
        if "art" in params.paths:
            keywords = expand(focus) if expand else []
            for keyword in keywords:
                result.hits.append(Hit(path="art", kind="keyword", pk=keyword, score=0.0, label=keyword))
            sparse = dict(retriever.articles_sparse(" ".join([focus, *keywords]), 2 * params.k))
            dense = dict(retriever.articles_dense(focus, 2 * params.k))
            fused = retrieval.fuse(sparse, dense, alpha=params.alpha)
            graph.prefetch_articles(fused)
            texts = {pk: " ".join(t.text for t in graph.article_texts(pk)[-1:]) for pk in fused}
            for pk, score in retrieval.rerank_by_intent(focus, fused, texts, classifier=intents)[: params.k]:
                result.hits.append(Hit(path="art", kind="article", pk=pk, score=round(score, 6)))
                add_articles("art", [pk])
    else:  # without the Researcher: the pre-judged charges' articles only
        for charge, p in prejudged:
            result.hits.append(Hit(path="chg", kind="charge", pk=charge, score=round(p, 6)))
            add_articles("chg", [a.pk for a in graph.articles_defining(charge)])

    graph.prefetch_articles_of_cases(cases)
    for pk, paths in cases.items():
        add_articles("case", [a.pk for a in graph.articles_of_case(pk)], companion=True)
    result.candidate_cases = sorted(cases)
    result.candidate_articles = sorted(articles, key=lambda pk: (nodes[pk].number, nodes[pk].sub))
    result.article_sources = {pk: sorted(set(v)) for pk, v in articles.items()}
    return result


COMMUNITY_SHORTLIST = 5


def _community_choice(query_text: str, focus: str, retriever: Retriever, graph: GraphStore,
                      pick: Callable[[str, list[CommunityNode]], int | None] | None) -> list[tuple[int, float]]:
    """[(community, score)]: the best scored one, or the model's choice among the shortlist."""
    ranked = retriever.community_scores(query_text)
    if pick is None or len(ranked) < 2:
        return ranked[:1]
    shortlist = dict(ranked[:COMMUNITY_SHORTLIST])
    nodes = [c for c in graph.communities() if c.pk in shortlist]
    chosen = pick(focus, sorted(nodes, key=lambda c: -shortlist[c.pk]))
    if chosen not in shortlist:
        return ranked[:1]
    return [(chosen, shortlist[chosen])]


def _llm_selected_cases(query_text: str, focus: str, retriever: Retriever, graph: GraphStore, params: Params,
                        select: Callable[[str, list[CaseNode]], list[int] | None], is_self) -> list[tuple[int, float]]:
    candidates = [(pk, score) for pk, score in retriever.similar_cases(query_text, 2 * params.k) if not is_self(pk)]
    found = {n.pk: n for n in graph.cases(pk for pk, _score in candidates)}
    nodes = [found[pk] for pk, _score in candidates if pk in found]
    selected = select(focus, nodes) if nodes else []
    if selected is None:  # no answer from the model: the similarity ranking decides
        return candidates[: params.k]
    scores = dict(candidates)
    return [(pk, scores[pk]) for pk in dict.fromkeys(selected) if pk in scores]
