"""Ports: what the reasoning core needs from the outside world.

The agents depend on these protocols only. apps/graph implements GraphStore
over Apache AGE; worker/agents/testing/memory_store.py implements it in memory for
pure tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from worker.agents.graph_types import (
    ArticleNode,
    ArticleText,
    CaseNode,
    ChecklistEntry,
    CommunityNode,
    InterpretationNode,
)


class GraphStore(Protocol):
    # Fact graph
    def case(self, case_pk: int) -> CaseNode | None: ...
    def cases(self, case_pks: Iterable[int]) -> list[CaseNode]: ...  # those that exist, by pk; one batch
    def cases_of_offence(self, charge: str, limit: int = 50) -> list[CaseNode]: ...
    def articles_of_case(self, case_pk: int) -> list[ArticleNode]: ...
    def articles_defining(self, charge: str) -> list[ArticleNode]: ...
    def offences(self) -> list[str]: ...
    # Ontology graph
    def neighbours(self, case_pk: int) -> list[tuple[int, float]]: ...
    def communities(self) -> list[CommunityNode]: ...
    def community_members(self, community_pk: int) -> list[int]: ...
    def community_of(self, case_pk: int) -> int | None: ...
    # Rule graph
    def article(self, article_pk: int) -> ArticleNode | None: ...
    def article_texts(self, article_pk: int) -> list[ArticleText]: ...
    def checklist(self, article_pk: int, version_pk: int | None = None) -> list[ChecklistEntry]: ...
    def interpretations(self, article_pk: int) -> list[InterpretationNode]: ...
    def references(self, article_pk: int) -> list[ArticleNode]: ...
    def referring(self, article_pks: Iterable[int]) -> dict[int, list[ArticleNode]]: ...  # incoming REFERS_TO; one batch
    def interpreted_articles(self, interpretation_pk: int) -> list[ArticleNode]: ...
    # The articles whose text in force now opens with ``opening``, a regular expression Python and PostgreSQL read
    # alike (provisions.DEFINITION_OPENING: 357's "本法所称…"; provisions.PUNISHMENT_OPENING: 383's "对犯贪污罪的"), each
    # with that text, in statute order.
    def opening_with(self, opening: str) -> list[tuple[ArticleNode, str]]: ...
    # Batch reads: afterwards article(), article_texts() and articles_of_case() of these pks answer
    # from what was read (a store without a round-trip cost may do nothing).
    def prefetch_articles(self, article_pks: Iterable[int]) -> None: ...
    def prefetch_articles_of_cases(self, case_pks: Iterable[int]) -> None: ...
    # Afterwards articles_defining() of ``charges`` and cases_of_offence(charge, cases_limit) of those in
    # ``with_cases`` answer from what was read.
    def prefetch_offences(self, charges: Iterable[str], *, with_cases: Iterable[str] = (), cases_limit: int = 50) -> None: ...


class Retriever(Protocol):
    """Search over the indexes (pgvector, BM25) the graph does not answer."""

    def similar_cases(self, query_text: str, k: int) -> list[tuple[int, float]]:
        """R_sem: cases by similarity of their ontology text to ``query_text``."""
        ...

    def community_scores(self, query_text: str) -> list[tuple[int, float]]:
        """Communities by similarity of their summary to ``query_text`` (best first)."""
        ...

    def case_scores(self, query_text: str, case_pks: list[int]) -> list[tuple[int, float]]:
        """Similarity of the given cases to ``query_text`` (ontology space), best first."""
        ...

    def articles_sparse(self, query: str, k: int) -> list[tuple[int, float]]:
        """BM25 over article texts: (article pk, score)."""
        ...

    def articles_dense(self, query: str, k: int) -> list[tuple[int, float]]:
        """Dense retrieval over article texts: (article pk, cosine)."""
        ...

    def flat_cases(self, query: str, k: int) -> list[tuple[int, float]]:
        """Flat retrieval over raw case facts (no graph): the ablation and naive-RAG path."""
        ...

    def interpretations_sparse(self, query: str, k: int) -> list[tuple[int, float]]:
        """Lexical (BM25) search over judicial-interpretation paragraphs: (interpretation pk, score).
        The agentic planner's interpretation source; its dense side goes through the articles."""
        ...


class Tokenize(Protocol):
    def __call__(self, text: str) -> list[str]: ...


class TextClassifier(Protocol):
    """A trained multi-label text model (charges, articles)."""

    model_id: str

    def top(self, tokens: list[str], k: int = 5, min_p: float = 0.0) -> list[tuple[str, float]]: ...
    def predict_proba(self, tokens: list[str]): ...


class TermModel(Protocol):
    model_id: str

    def predict(self, tokens: list[str]) -> "Term": ...  # noqa: F821
