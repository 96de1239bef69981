"""A Retriever over an InMemoryGraphStore, scoring by character-bigram overlap.

For pure tests of the pipeline: no index, no model, deterministic. It reads the
same graph the agents read, so retrieval results stay consistent with it.
"""

from __future__ import annotations

from worker.agents.testing.memory_store import InMemoryGraphStore


def _grams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}


def _score(query: str, text: str) -> float:
    q, t = _grams(query), _grams(text)
    return len(q & t) / len(q | t) if q and t else 0.0


def _ranked(scores: dict[int, float], k: int | None = None) -> list[tuple[int, float]]:
    ranked = sorted(((pk, s) for pk, s in scores.items() if s > 0), key=lambda kv: (-kv[1], kv[0]))
    return ranked if k is None else ranked[:k]


class InMemoryRetriever:
    def __init__(self, store: InMemoryGraphStore, facts: dict[int, str] | None = None):
        self.store = store
        self.facts = facts or {}  # raw case facts for the flat path (by case pk)

    def _case_text(self, pk: int) -> str:
        node = self.store.case(pk)
        features = "、".join(label for labels in node.features.values() for label in labels)
        return f"{features}{'、'.join(node.charges)}"

    def _case_pks(self) -> list[int]:
        return sorted({c.pk for charge in self.store.offences() for c in self.store.cases_of_offence(charge, limit=10_000)})

    def similar_cases(self, query_text: str, k: int) -> list[tuple[int, float]]:
        return _ranked({pk: _score(query_text, self._case_text(pk)) for pk in self._case_pks()}, k)

    def community_scores(self, query_text: str) -> list[tuple[int, float]]:
        return _ranked({c.pk: _score(query_text, c.summary) for c in self.store.communities()})

    def case_scores(self, query_text: str, case_pks: list[int]) -> list[tuple[int, float]]:
        return _ranked({pk: _score(query_text, self._case_text(pk)) for pk in case_pks})

    def _article_scores(self, query: str) -> dict[int, float]:
        scores = {}
        for charge in self.store.offences():
            for article in self.store.articles_defining(charge):
                text = " ".join(t.text for t in self.store.article_texts(article.pk))
                scores[article.pk] = _score(query, text + "".join(article.charges))
        return scores

    def articles_sparse(self, query: str, k: int) -> list[tuple[int, float]]:
        return [(pk, s * 10) for pk, s in _ranked(self._article_scores(query), k)]

    def articles_dense(self, query: str, k: int) -> list[tuple[int, float]]:
        return _ranked(self._article_scores(query), k)

    def flat_cases(self, query: str, k: int) -> list[tuple[int, float]]:
        return _ranked({pk: _score(query, text) for pk, text in self.facts.items()}, k)

    def interpretations_sparse(self, query: str, k: int) -> list[tuple[int, float]]:
        return [(pk, s * 10) for pk, s in _ranked({i.pk: _score(query, i.text) for i in self.store.all_interpretations()}, k)]
