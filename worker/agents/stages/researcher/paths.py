"""The Researcher's retrieval paths, each registered under its name in :data:`PATHS`.

A path (:class:`RetrievalPath`) gets a :class:`Query` — the case, its focus, features and query text, the
pre-judged charges, the parameters, the graph and the retriever, and the strategy's optional helpers — and
yields what it finds, in the order it finds it:

- :class:`~worker.agents.types.Hit`: a hit the path shows as found by it (a community, a charge, an article,
  a keyword);
- :class:`Cases`: precedents, best first; the Researcher keeps ``Params.keep_cases`` of them (never the case
  itself in a leave-one-out evaluation) and shows each as a hit of the path;
- :class:`Articles`: articles that become candidates if they define an offence of the specific part
  (``companion``: also one that defines none, such as a punishment article its precedents cite);
- :class:`CaseCommunity`, :class:`ChargeShares`: what the path learnt about the case (the community it
  searched; the share of a pre-judged charge's precedents that cite each article).

``Params.paths`` selects the paths that run, in the order they were registered; by default every path
registered as ``default`` (all but the flat path, which is naive RAG's only path). An ablation ``no_<name>``
is the default paths without that one. A new path: a subclass of :class:`RetrievalPath` with its ``name``,
decorated with :func:`register`; what it needs from the graph or the index is a method of the ports
(worker/agents/ports.py); its ablation is ``no_<name>`` in worker/agents/names.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from worker.agents.graph_types import ArticleNode, CaseNode, CommunityNode
from worker.agents.ports import GraphStore, Retriever
from worker.agents.stages.researcher import retrieval
from worker.agents.types import CaseInput, Hit

if TYPE_CHECKING:
    from worker.agents.pipeline import Params


@dataclass(frozen=True)
class Query:
    """What every path gets."""

    case: CaseInput | None
    focus: str
    features: dict
    query_text: str
    prejudged: list[tuple[str, float]]
    params: Params
    graph: GraphStore
    retriever: Retriever
    intents: retrieval.IntentClassifier | None = None  # the trained intent model for the article rerank
    expand: Callable[[str], list[str]] | None = None  # IRAC keywords for the sparse article search
    pick_community: Callable[[str, list[CommunityNode]], int | None] | None = None
    select_cases: Callable[[str, list[CaseNode]], list[int] | None] | None = None
    resolve: Callable[[str], list[str]] | None = None  # the statute charges a pre-judged label stands for

    def defining(self, charge: str) -> list[ArticleNode]:
        """The articles defining a pre-judged charge; for a label no article defines (a former or a dataset
        name), those defining the statute charges it stands for."""
        found = self.graph.articles_defining(charge)
        if found or self.resolve is None:
            return found
        return [a for name in self.resolve(charge) if name != charge for a in self.graph.articles_defining(name)]

    def is_self(self, pk: int) -> bool:
        """A leave-one-out evaluation's own case (never retrieved)."""
        if not (self.params.exclude_self and self.case.ref):
            return False
        node = self.graph.case(pk)
        return node is not None and self.case.left_out(node.ext_id)


@dataclass(frozen=True)
class Cases:
    scored: list[tuple[int, float]]


@dataclass(frozen=True)
class Articles:
    pks: list[int]
    companion: bool = False


@dataclass(frozen=True)
class CaseCommunity:
    pk: int


@dataclass(frozen=True)
class ChargeShares:
    charge: str
    shares: dict[int, float]


Found = Hit | Cases | Articles | CaseCommunity | ChargeShares


class RetrievalPath:
    """The protocol of a path: its ``name`` (on its hits and in ``Params.paths``) and ``find``."""

    name: ClassVar[str] = ""
    default: ClassVar[bool] = True  # among Params.paths unless they leave it out

    def find(self, q: Query) -> Iterator[Found]:
        raise NotImplementedError


PATHS: dict[str, RetrievalPath] = {}


def register(path: type[RetrievalPath]) -> type[RetrievalPath]:
    """Register a path class under its name (a class decorator)."""
    if not path.name or path.name in PATHS:
        raise ValueError(f"a retrieval path needs a name of its own: {path.name!r}")
    PATHS[path.name] = path()
    return path


def default_paths() -> tuple[str, ...]:
    """Params.paths by default: the registered paths marked ``default``, in the order they were registered."""
    return tuple(name for name, path in PATHS.items() if path.default)


@register
class SemanticPath(RetrievalPath):
    """R_sem: the precedents nearest the facts' ontology text (without the graph: by a flat search of the
    facts). The LLM strategy may keep the most similar of ``2k`` candidates (``select_cases``)."""

    name = "sem"

    def find(self, q: Query) -> Iterator[Found]:
        if q.params.use_graph and q.select_cases is not None:
            yield Cases(_selected_cases(q))
        else:
            yield Cases(q.retriever.similar_cases(q.query_text, q.params.k) if q.params.use_graph
                        else q.retriever.flat_cases(q.focus, q.params.k))


@register
class CommunityPath(RetrievalPath):
    """R_com: the community nearest the facts (or the LLM's pick among the best scored) and its members
    nearest the facts. Needs the graph."""

    name = "com"

    def find(self, q: Query) -> Iterator[Found]:
        if not q.params.use_graph:
            return
        best = _community_choice(q)
        if best:
            pk, score = best[0]
            yield CaseCommunity(pk)
            yield Hit(path=self.name, kind="community", pk=pk, score=round(score, 6),
                      label="chosen by the model" if q.pick_community else "")
            yield Cases(q.retriever.case_scores(q.query_text, q.graph.community_members(pk))[: q.params.k])


CHARGE_CASES = 200  # R_chg reads at most this many precedents of a charge (the first by pk)


@register
class ChargePath(RetrievalPath):
    """R_chg: the articles defining each pre-judged charge (or the statute charge a label stands for,
    Query.defining); with the graph, for the first
    ``graph_charges`` of them, the charge's Fact-graph neighbourhood: its cases and the articles they cite
    (this also reaches articles for dataset charge names no article defines, and the punishment articles
    that go with a charge)."""

    name = "chg"

    def find(self, q: Query) -> Iterator[Found]:
        charges = [charge for charge, _ in q.prejudged]
        resolved = [name for charge in charges for name in (q.resolve(charge) if q.resolve else ())]
        q.graph.prefetch_offences(list(dict.fromkeys(charges + resolved)),
                                  with_cases=charges[:q.params.graph_charges] if q.params.use_graph else (),
                                  cases_limit=CHARGE_CASES)
        for n, (charge, p) in enumerate(q.prejudged):
            yield Hit(path=self.name, kind="charge", pk=charge, score=round(p, 6))
            yield Articles([a.pk for a in q.defining(charge)])
            if q.params.use_graph and n < q.params.graph_charges:
                offence_cases = [c for c in q.graph.cases_of_offence(charge, limit=CHARGE_CASES) if not q.is_self(c.pk)]
                yield ChargeShares(charge, _cite_shares(offence_cases))
                yield Articles(_most_cited(offence_cases, 2), companion=True)
                yield Cases(q.retriever.case_scores(q.query_text, [c.pk for c in offence_cases])[: q.params.k])


@register
class ArticlePath(RetrievalPath):
    """R_art: articles by BM25 (the focus and any IRAC keywords) fused with the dense search (LexPath),
    reranked by the facts' intent."""

    name = "art"

    def find(self, q: Query) -> Iterator[Found]:
        k = q.params.k
        keywords = q.expand(q.focus) if q.expand else []
        for keyword in keywords:
            yield Hit(path=self.name, kind="keyword", pk=keyword, score=0.0, label=keyword)
        sparse = dict(q.retriever.articles_sparse(" ".join([q.focus, *keywords]), 2 * k))
        dense = dict(q.retriever.articles_dense(q.focus, 2 * k))
        fused = retrieval.fuse(sparse, dense, alpha=q.params.alpha)
        q.graph.prefetch_articles(fused)
        texts = {pk: " ".join(t.text for t in q.graph.article_texts(pk)[-1:]) for pk in fused}
        for pk, score in retrieval.rerank_by_intent(q.focus, fused, texts, classifier=q.intents)[:k]:
            yield Hit(path=self.name, kind="article", pk=pk, score=round(score, 6))
            yield Articles([pk])


@register
class FlatPath(RetrievalPath):
    """Naive RAG's only path: the top ``k`` precedents and articles for the raw facts, no graph, no rerank."""

    name = "flat"
    default = False

    def find(self, q: Query) -> Iterator[Found]:
        k = q.params.k
        yield Cases(q.retriever.flat_cases(q.focus, k))
        sparse, dense = dict(q.retriever.articles_sparse(q.focus, k)), dict(q.retriever.articles_dense(q.focus, k))
        fused = retrieval.fuse(sparse, dense, alpha=q.params.alpha)
        for pk, score in retrieval.top(fused.items(), k):
            yield Hit(path=self.name, kind="article", pk=pk, score=round(score, 6))
            yield Articles([pk])


def _cite_shares(cases, floor: float = 0.05) -> dict[int, float]:
    """Article pk → share of ``cases`` citing it (shares below ``floor`` left out)."""
    counts: dict[int, int] = {}
    for case in cases:
        for pk in set(case.article_pks):
            counts[pk] = counts.get(pk, 0) + 1
    if not cases:
        return {}
    return {pk: round(n / len(cases), 4) for pk, n in sorted(counts.items()) if n / len(cases) >= floor}


def _most_cited(cases, n: int) -> list[int]:
    counts: dict[int, int] = {}
    for case in cases:
        for pk in case.article_pks:
            counts[pk] = counts.get(pk, 0) + 1
    return [pk for pk, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


COMMUNITY_SHORTLIST = 5


def _community_choice(q: Query) -> list[tuple[int, float]]:
    """[(community, score)]: the best scored one, or the model's choice among the shortlist."""
    ranked = q.retriever.community_scores(q.query_text)
    if q.pick_community is None or len(ranked) < 2:
        return ranked[:1]
    shortlist = dict(ranked[:COMMUNITY_SHORTLIST])
    nodes = [c for c in q.graph.communities() if c.pk in shortlist]
    chosen = q.pick_community(q.focus, sorted(nodes, key=lambda c: -shortlist[c.pk]))
    if chosen not in shortlist:
        return ranked[:1]
    return [(chosen, shortlist[chosen])]


def _selected_cases(q: Query) -> list[tuple[int, float]]:
    """The precedents the model keeps of the semantic path's ``2k`` candidates (none is a valid answer; no
    answer leaves the similarity ranking)."""
    similar = q.retriever.similar_cases(q.query_text, 2 * q.params.k)
    candidates = [(pk, score) for pk, score in similar if not q.is_self(pk)]
    found = {n.pk: n for n in q.graph.cases(pk for pk, _score in candidates)}
    nodes = [found[pk] for pk, _score in candidates if pk in found]
    selected = q.select_cases(q.focus, nodes) if nodes else []
    if selected is None:  # no answer from the model: the similarity ranking decides
        return candidates[: q.params.k]
    scores = dict(candidates)
    return [(pk, scores[pk]) for pk in dict.fromkeys(selected) if pk in scores]
