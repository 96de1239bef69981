"""BM25 over pre-tokenized documents, with external ids and pickle-free persistence.

Backend: ``bm25s`` builds the index. It precomputes every (document, term) BM25
weight into one sparse CSC matrix, so a query only sums a few columns. We keep
those three arrays and score them ourselves with ``np.bincount`` (same sums, a
fixed summation order, no dependency on bm25s internals at query time).
``bench/bm25_choice.py`` measured it against ``rank-bm25`` on the real corpus:
see docs/SEARCH.md, "BM25 library choice", for the numbers behind this choice.

Variant: Lucene BM25 (bm25s ``method="lucene"``): idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
which is always positive, so every document sharing a query term scores > 0 and
no document without one does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

DocId = str | int

FORMAT = "lextrace-bm25/1"
META_FILE = "bm25.json"
ARRAYS_FILE = "bm25.npz"
METHOD = "lucene"


def _check_doc_ids(doc_ids: Sequence[DocId]) -> list[DocId]:
    ids = list(doc_ids)
    for doc_id in ids:
        # bool is an int subclass but would not survive as an id in JSON round trips sensibly.
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            raise TypeError(f"document ids must be str or int, got {doc_id!r}")
    if len(set(ids)) != len(ids):
        raise ValueError("document ids must be unique")
    return ids


def top_k_stable(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` best positive scores, ties broken by lower index.

    argpartition alone may pick any of several documents tied at the k-th
    score; taking all strictly better ones and then the earliest tied ones
    makes the result reproducible.
    """
    positive = np.flatnonzero(scores > 0)
    if k <= 0 or positive.size == 0:
        return positive[:0]
    if positive.size > k:
        values = scores[positive]
        kth = np.partition(values, positive.size - k)[positive.size - k]
        better = positive[values > kth]
        tied = positive[values == kth][: k - better.size]
        positive = np.concatenate([better, tied])
    order = np.lexsort((positive, -scores[positive]))
    return positive[order]


class BM25Index:
    """An immutable BM25 index: build once, search many times, save and load."""

    def __init__(
        self,
        doc_ids: list[DocId],
        vocab: list[str],
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        params: dict[str, Any],
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if indptr.shape != (len(vocab) + 1,):
            raise ValueError("indptr must have one entry per vocabulary term plus one")
        if data.shape != indices.shape or (indptr.size and indptr[-1] != data.size):
            raise ValueError("inconsistent sparse score matrix")
        if indices.size and (indices.min() < 0 or indices.max() >= len(doc_ids)):
            raise ValueError("document index out of range")
        self._doc_ids = doc_ids
        self._vocab = vocab
        self._term_ids = {term: i for i, term in enumerate(vocab)}
        self._data = data
        self._indices = indices
        self._indptr = indptr
        self.params = params
        self.metadata = metadata or {}

    # -- building -------------------------------------------------------------
    @classmethod
    def build(
        cls,
        doc_ids: Sequence[DocId],
        token_lists: Sequence[Sequence[str]],
        k1: float = 1.5,
        b: float = 0.75,
        metadata: dict[str, Any] | None = None,
    ) -> BM25Index:
        """Index ``token_lists[i]`` under ``doc_ids[i]``.

        ``metadata`` (JSON-serialisable) is stored with the index; put the
        tokenizer fingerprint there so a loader can refuse a mismatched tokenizer.
        """
        ids = _check_doc_ids(doc_ids)
        if len(ids) != len(token_lists):
            raise ValueError("doc_ids and token_lists differ in length")
        # Our own vocabulary in first-occurrence order: bm25s builds its vocabulary
        # from a set, whose order changes with Python's string hash seed, and we
        # want byte-identical artefacts from identical input.
        term_ids: dict[str, int] = {}
        corpus_ids = [[term_ids.setdefault(t, len(term_ids)) for t in tokens] for tokens in token_lists]
        params = {"k1": float(k1), "b": float(b), "method": METHOD, "library": f"bm25s=={bm25s.__version__}"}
        if not term_ids:  # no documents, or only empty ones: nothing can match
            empty_f, empty_i = np.zeros(0, np.float32), np.zeros(0, np.int32)
            return cls(ids, [], empty_f, empty_i, np.zeros(1, np.int64), params, metadata)
        retriever = bm25s.BM25(k1=k1, b=b, method=METHOD)
        retriever.index((corpus_ids, term_ids), create_empty_token=False, show_progress=False)
        scores = retriever.scores
        return cls(
            ids,
            list(term_ids),
            np.ascontiguousarray(scores["data"], dtype=np.float32),
            np.ascontiguousarray(scores["indices"], dtype=np.int32),
            np.ascontiguousarray(scores["indptr"], dtype=np.int64),
            params,
            metadata,
        )

    # -- searching ------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._doc_ids)

    @property
    def doc_ids(self) -> list[DocId]:
        return list(self._doc_ids)

    @property
    def vocabulary_size(self) -> int:
        return len(self._vocab)

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        """BM25 score of every document (float64, in document order).

        A token repeated in the query counts once per occurrence, as in bm25s
        and rank-bm25; unknown tokens contribute nothing.
        """
        # Count repeats first: long facts repeat common terms (被告人 ...) dozens of
        # times, and gathering one column slice per occurrence needed 140 MB
        # of temporaries on the real eval queries; one pass per distinct term needs O(n_docs).
        counts: dict[int, int] = {}
        for token in query_tokens:
            tid = self._term_ids.get(token)
            if tid is not None:
                counts[tid] = counts.get(tid, 0) + 1
        scores = np.zeros(len(self._doc_ids), dtype=np.float64)
        for tid, count in counts.items():  # first-occurrence order: a fixed summation order
            start, end = self._indptr[tid], self._indptr[tid + 1]
            # Within one term's column every document appears once, so fancy-index += is exact.
            scores[self._indices[start:end]] += count * self._data[start:end].astype(np.float64)
        return scores

    def document_shares(self, terms: Iterable[str]) -> dict[str, float]:
        """Term → the share of the indexed documents that contain it (0 for a term none contains)."""
        n = max(1, len(self._doc_ids))
        out = {}
        for term in terms:
            i = self._term_ids.get(term)
            out[term] = 0.0 if i is None else float(self._indptr[i + 1] - self._indptr[i]) / n
        return out

    def documents_with(self, term: str) -> list[DocId]:
        """The ids of the indexed documents that contain ``term``, in index order."""
        i = self._term_ids.get(term)
        if i is None:
            return []
        return [self._doc_ids[j] for j in self._indices[self._indptr[i]:self._indptr[i + 1]].tolist()]

    def search(self, query_tokens: Iterable[str], k: int = 10) -> list[tuple[DocId, float]]:
        """The ``k`` best documents with a positive score, best first, ties by document order."""
        scores = self.scores(query_tokens)
        return [(self._doc_ids[i], float(scores[i])) for i in top_k_stable(scores, k)]

    def search_many(self, queries: Iterable[Iterable[str]], k: int = 10) -> list[list[tuple[DocId, float]]]:
        # One query at a time so every result equals search() bit for bit.
        return [self.search(q, k) for q in queries]

    # -- persistence ----------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write ``bm25.json`` (parameters, ids, vocabulary) and ``bm25.npz`` (the matrix)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        np.savez(directory / ARRAYS_FILE, data=self._data, indices=self._indices, indptr=self._indptr)
        meta = {
            "format": FORMAT,
            "params": self.params,
            "metadata": self.metadata,
            "n_docs": len(self._doc_ids),
            "doc_ids": self._doc_ids,
            "vocab": self._vocab,
        }
        (directory / META_FILE).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> BM25Index:
        directory = Path(directory)
        meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError(f"{directory}: not a {FORMAT} index (format={meta.get('format')!r})")
        with np.load(directory / ARRAYS_FILE, allow_pickle=False) as arrays:
            data, indices, indptr = arrays["data"], arrays["indices"], arrays["indptr"]
        doc_ids = _check_doc_ids(meta["doc_ids"])
        if len(doc_ids) != meta["n_docs"]:
            raise ValueError(f"{directory}: document count mismatch")
        return cls(doc_ids, list(meta["vocab"]), data, indices, indptr, meta["params"], meta.get("metadata"))
