"""The Retriever port over the database: pgvector (ontology, articles), BM25 (articles, facts)."""

from __future__ import annotations

import numpy as np
from django.db.models import TextField
from django.db.models.functions import Cast

from apps.corpus.models import ArticleVersion, DenseVector, Interpretation, SearchIndex
from apps.corpus.search_service import bm25_search, dense_search, dense_search_vector, query_vector
from apps.graph.models import Community

_INTERPRETATION_BM25: dict[tuple, tuple] = {}  # (count, max pk, max ext_id) -> (BM25Index over the paragraphs, tokenizer)


def _interpretation_index():
    """A BM25 index over the interpretation paragraphs, built in memory on first use (657 short texts:
    well under a second) and rebuilt when the table changes."""
    from django.db.models import Count, Max

    from lexlib.search.bm25 import BM25Index
    from apps.corpus.search_service import legal_tokenizer

    stamp = tuple(Interpretation.objects.aggregate(n=Count("pk"), top=Max("pk"), ext=Max("ext_id")).values())
    if stamp not in _INTERPRETATION_BM25:
        tokenizer = legal_tokenizer()
        rows = list(Interpretation.objects.order_by("pk").values_list("pk", "text"))
        _INTERPRETATION_BM25.clear()
        _INTERPRETATION_BM25[stamp] = (BM25Index.build([pk for pk, _ in rows], [tokenizer.tokens(t) for _, t in rows]),
                                       tokenizer)
    return _INTERPRETATION_BM25[stamp]


def _cosines(pairs, vector: np.ndarray) -> list[tuple[int, float]]:
    """Cosine of each (pk, embedding) with ``vector``, best first (ties by pk)."""
    norm = np.linalg.norm(vector) or 1.0
    scored = [(pk, float(np.dot(e, vector) / ((np.linalg.norm(e) * norm) or 1.0))) for pk, e in pairs]
    return sorted(scored, key=lambda kv: (-kv[1], kv[0]))


def _vectors(rows, *, field: str = "vector", key: str = "object_id"):
    """(object_id, vector) of DenseVector rows, the vectors parsed by numpy from pgvector's text form
    (hundreds of rows per R_chg or R_com call: parsing each float in Python took most of the time).
    The same float64 values as pgvector's own parser (both round each decimal to the nearest double)."""
    texts = rows.annotate(text=Cast(field, TextField())).values_list(key, "text")
    return [(pk, np.fromstring(text[1:-1], sep=",")) for pk, text in texts]


def _best_per_article(hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Version-level hits → article-level (the best version's score), order kept."""
    articles = dict(ArticleVersion.objects.filter(pk__in=[pk for pk, _ in hits]).values_list("pk", "article_id"))
    best: dict[int, float] = {}
    for version_pk, score in hits:
        article = articles.get(version_pk)
        if article is not None and score > best.get(article, float("-inf")):
            best[article] = score
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))


class DbRetriever:
    """Implements worker.agents.ports.Retriever."""

    def __init__(self):
        self._query_cache: dict[str, tuple[SearchIndex, np.ndarray] | None] = {}
        # Case vectors read so far (one retriever serves every defendant of a case, and the defendants
        # mostly share their community and their charges' cases): (index pk, case pk) -> vector.
        self._vector_cache: dict[tuple[int, int], np.ndarray] = {}

    def _ontology(self, query_text: str):
        if query_text not in self._query_cache:
            self._query_cache[query_text] = query_vector(target=SearchIndex.Target.FEATURES, query=query_text)
        return self._query_cache[query_text]

    def similar_cases(self, query_text: str, k: int) -> list[tuple[int, float]]:
        found = self._ontology(query_text)
        return dense_search_vector(found[0], found[1], k=k) if found else []

    def community_scores(self, query_text: str) -> list[tuple[int, float]]:
        found = self._ontology(query_text)
        if not found:
            return []
        index, vector = found
        rows = Community.objects.filter(embedding_model=index.model_id, embedding__isnull=False)
        # float32 as pgvector's own parser gives them (the scores, and so the ties, stay what they were)
        return _cosines(((pk, e.astype(np.float32)) for pk, e in _vectors(rows, field="embedding", key="pk")), vector)

    def case_scores(self, query_text: str, case_pks: list[int]) -> list[tuple[int, float]]:
        found = self._ontology(query_text)
        if not found or not case_pks:
            return []
        index, vector = found
        missing = sorted({pk for pk in case_pks if (index.pk, pk) not in self._vector_cache})
        if missing:
            read = dict(_vectors(DenseVector.objects.filter(index=index, object_id__in=missing)))
            self._vector_cache.update({(index.pk, pk): read.get(pk) for pk in missing})
        pairs = [(pk, v) for pk in dict.fromkeys(case_pks) if (v := self._vector_cache[(index.pk, pk)]) is not None]
        return _cosines(pairs, vector)

    def articles_sparse(self, query: str, k: int) -> list[tuple[int, float]]:
        return _best_per_article(bm25_search(target=SearchIndex.Target.ARTICLES, query=query, k=2 * k))[:k]

    def articles_dense(self, query: str, k: int) -> list[tuple[int, float]]:
        return _best_per_article(dense_search(target=SearchIndex.Target.ARTICLES, query=query, k=2 * k))[:k]

    def flat_cases(self, query: str, k: int) -> list[tuple[int, float]]:
        return bm25_search(target=SearchIndex.Target.PRECEDENTS, query=query, k=k)

    def interpretations_sparse(self, query: str, k: int) -> list[tuple[int, float]]:
        index, tokenizer = _interpretation_index()
        return [(int(pk), float(score)) for pk, score in index.search(tokenizer.tokens(query), k=k)]
