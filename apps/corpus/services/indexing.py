"""Build the search indexes (BM25 and dense) over articles and precedents.

A new index is built beside the active one; only when it is complete does one
short transaction switch the active flag, so a failed or interrupted rebuild
never takes search away (RELIABILITY.md G11). Artefacts live under
MEDIA_ROOT/indexes/<id>/ and are written only by this process (never loaded
from uploads, never pickled).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.corpus.models import ArticleVersion, DenseVector, Precedent, SearchIndex
from lexlib.search.bm25 import BM25Index
from apps.corpus.search_service import legal_tokenizer
from lexlib.search.tokenize import Tokenizer

log = logging.getLogger(__name__)
Progress = Callable[[str], None] | None

DEFAULT_DENSE_BACKEND = "lsa"


def index_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "indexes"


def article_documents() -> tuple[list[int], list[str]]:
    """ArticleVersion ids and the text indexed for each: label, chapter, charges and text."""
    ids, texts = [], []
    versions = ArticleVersion.objects.select_related("article").prefetch_related("article__charges").order_by("pk")
    for v in versions:
        charges = " ".join(c.name for c in v.article.charges.all())
        ids.append(v.pk)
        texts.append(f"{v.article.label} {v.chapter} {v.section} {charges} {v.text}")
    return ids, texts


def precedent_documents() -> tuple[list[int], list[str]]:
    rows = Precedent.objects.order_by("pk").values_list("pk", "fact")
    return [r[0] for r in rows], [r[1] for r in rows]


DOCUMENTS = {SearchIndex.Target.ARTICLES: article_documents, SearchIndex.Target.PRECEDENTS: precedent_documents}


def _activate(index: SearchIndex) -> None:
    with transaction.atomic():
        SearchIndex.objects.filter(target=index.target, method=index.method, active=True).exclude(pk=index.pk).update(active=False)
        index.active = True
        index.status = SearchIndex.Status.READY
        index.finished_at = timezone.now()
        index.save(update_fields=["active", "status", "finished_at", "documents", "artefact_dir", "model_id", "dim", "params"])


def tokenized_documents(target: str, tokenizer: Tokenizer, progress: Progress = None) -> tuple[list[int], list[list[str]]]:
    ids, texts = DOCUMENTS[target]()
    if progress:
        progress(f"tokenizing {len(ids)} {target}")
    return ids, tokenizer.tokens_many(texts)


TOKENS_FILE = "tokens.npz"
TOKENS_VOCAB_FILE = "tokens-vocab.json"


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _tokens_save(directory: Path, ids: list[int], hashes: list[str], tokens: list[list[str]]) -> None:
    """The token lists of an index's documents, as integer ids into a vocabulary (JSON + .npz, no pickle)."""
    vocabulary: dict[str, int] = {}
    flat = [vocabulary.setdefault(t, len(vocabulary)) for doc in tokens for t in doc]
    offsets = np.cumsum([0, *(len(doc) for doc in tokens)], dtype=np.int64)
    np.savez(directory / TOKENS_FILE, ids=np.asarray(ids, dtype=np.int64), offsets=offsets,
             flat=np.asarray(flat, dtype=np.int32))
    (directory / TOKENS_VOCAB_FILE).write_text(json.dumps({"vocabulary": list(vocabulary), "hashes": hashes}), encoding="utf-8")


def _tokens_load(directory: str) -> dict[int, tuple[str, list[str]]] | None:
    """document id -> (text hash, tokens) of an index built with its tokens kept; None for older indexes."""
    path = Path(directory)
    if not (path / TOKENS_FILE).is_file() or not (path / TOKENS_VOCAB_FILE).is_file():
        return None
    meta = json.loads((path / TOKENS_VOCAB_FILE).read_text(encoding="utf-8"))
    vocabulary, hashes = meta["vocabulary"], meta["hashes"]
    with np.load(path / TOKENS_FILE, allow_pickle=False) as arrays:
        ids, offsets, flat = arrays["ids"].tolist(), arrays["offsets"], arrays["flat"]
    words = [vocabulary[i] for i in flat.tolist()]
    return {doc: (hashes[n], words[offsets[n]:offsets[n + 1]]) for n, doc in enumerate(ids)}


def bm25_index_build(*, target: str, tokenizer: Tokenizer | None = None, documents=None, progress: Progress = None,
                     texts: list[str] | None = None) -> SearchIndex:
    """BM25 over ``documents`` ((ids, token lists), tokenized here when not given).

    The token lists are kept beside the index (with a hash of each document's text), so the
    follow-up of an import tokenizes only the documents it added or changed.
    """
    tokenizer = tokenizer or legal_tokenizer()
    index = SearchIndex.objects.create(target=target, method=SearchIndex.Method.BM25, backend="bm25s",
                                       model_id=f"bm25-jieba-{tokenizer.fingerprint()}")
    try:
        if documents is None:
            ids, texts = DOCUMENTS[target]()
            if progress:
                progress(f"tokenizing {len(ids)} {target}")
            documents = (ids, tokenizer.tokens_many(texts))
        ids, tokens = documents
        if texts is None:
            texts = DOCUMENTS[target]()[1]
        bm25 = BM25Index.build(ids, tokens, metadata={"tokenizer": tokenizer.fingerprint(), "target": target})
        # A fresh name, not the row id: several databases may share MEDIA_ROOT.
        directory = index_root() / f"bm25-{target}-{uuid.uuid4().hex}"
        bm25.save(directory)
        _tokens_save(directory, ids, [_text_hash(t) for t in texts], tokens)
        index.artefact_dir = str(directory)
        index.documents = len(ids)
        index.params = bm25.params
        _activate(index)
    except Exception:
        SearchIndex.objects.filter(pk=index.pk).update(status=SearchIndex.Status.FAILED, finished_at=timezone.now())
        raise
    return index


def dense_index_build(*, target: str, backend, backend_name: str, artefact_dir: str = "", progress: Progress = None,
                      batch_size: int = 256, tokens: list[list[str]] | None = None) -> SearchIndex:
    """Embed every document with ``backend`` and build an HNSW index over them.

    ``tokens`` (the documents already tokenized by the backend's tokenizer) spares
    a second jieba pass for token-based backends such as LSA.
    """
    index = SearchIndex.objects.create(target=target, method=SearchIndex.Method.DENSE, backend=backend_name,
                                       model_id=backend.model_id, dim=backend.dim, artefact_dir=artefact_dir,
                                       params={"backend": backend_name})
    try:
        ids, texts = DOCUMENTS[target]()
        for start in range(0, len(ids), batch_size):
            if tokens is not None:
                vectors = backend.embed_tokens(tokens[start:start + batch_size])
            else:
                vectors = backend.embed_passages(texts[start:start + batch_size])
            DenseVector.objects.bulk_create(
                [DenseVector(index=index, object_id=i, vector=v) for i, v in zip(ids[start:start + batch_size], vectors)]
            )
            if progress:
                progress(f"embedded {min(start + batch_size, len(ids))}/{len(ids)} {target}")
        _create_hnsw(index, backend.dim)
        index.documents = len(ids)
        _activate(index)
    except Exception:
        SearchIndex.objects.filter(pk=index.pk).update(status=SearchIndex.Status.FAILED, finished_at=timezone.now())
        raise
    return index


def dense_index_from_vectors(*, target: str, backend_name: str, model_id: str, artefact_dir: str,
                             ids: list[int], vectors: np.ndarray) -> SearchIndex:
    """Store vectors computed elsewhere (e.g. by the graph build) as the active dense index of ``target``."""
    dim = int(vectors.shape[1])
    index = SearchIndex.objects.create(target=target, method=SearchIndex.Method.DENSE, backend=backend_name,
                                       model_id=model_id, dim=dim, artefact_dir=artefact_dir,
                                       params={"backend": backend_name})
    DenseVector.objects.bulk_create([DenseVector(index=index, object_id=i, vector=v) for i, v in zip(ids, vectors)],
                                    batch_size=2000)
    _create_hnsw(index, dim)
    index.documents = len(ids)
    _activate(index)
    return index


def _create_hnsw(index: SearchIndex, dim: int) -> None:
    with connection.cursor() as cursor:
        # Inside a larger transaction the vectors' deferred FK checks must run
        # first: PostgreSQL refuses CREATE INDEX with pending trigger events.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # A partial expression index, one per search index: the column holds vectors of several
        # models (dimensions); each index gets an HNSW graph over its own rows. Created by the
        # owner's function (apps/core/migrations/0003_definer_functions.py): the application role
        # owns no table, and CREATE INDEX needs the owner.
        cursor.execute("SELECT corpus_hnsw_index_create(%s, %s)", [int(index.pk), int(dim)])


def _drop_hnsw(index: SearchIndex) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT corpus_hnsw_index_drop(%s)", [int(index.pk)])


class IndexBuildBusy(RuntimeError):
    """Another search-index build holds the build lock."""


_BUILD_LOCK = "lextrace:search-index-build"


@contextmanager
def _build_lock():
    """One search-index build at a time, across processes (a session-level advisory lock:
    PostgreSQL releases it by itself when the holder's connection dies)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [_BUILD_LOCK])
        if not cursor.fetchone()[0]:
            raise IndexBuildBusy("another search index build is running; try again when it has finished")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [_BUILD_LOCK])


def abandoned_builds_discard() -> list[int]:
    """Mark the builds a killed process left behind as failed and free their vectors, HNSW indexes and
    artefacts. Only called under the build lock, so no build of these targets is running."""
    targets = (SearchIndex.Target.ARTICLES, SearchIndex.Target.PRECEDENTS)
    abandoned = list(SearchIndex.objects.filter(status=SearchIndex.Status.BUILDING, active=False, target__in=targets))
    for index in abandoned:
        _drop_hnsw(index)
        DenseVector.objects.filter(index=index).delete()
        if index.artefact_dir:
            shutil.rmtree(index.artefact_dir, ignore_errors=True)
        SearchIndex.objects.filter(pk=index.pk).update(
            status=SearchIndex.Status.FAILED, finished_at=timezone.now(),
            params={**index.params, "failure": "abandoned: the building process died"})
        log.warning("discarded the abandoned %s index %s of %s", index.method, index.pk, index.target)
    return [i.pk for i in abandoned]


def search_indexes_build(*, dense_backend: str = DEFAULT_DENSE_BACKEND, progress: Progress = None) -> list[SearchIndex]:
    """BM25 and dense indexes over articles and precedents, each switched in when complete.

    One build runs at a time (IndexBuildBusy otherwise); it starts by discarding what a killed
    build left behind. Until a new index is switched in, the previous one keeps serving.

    The default dense backend is an LSA model trained here on the corpus itself
    (articles and precedents together, so queries of either kind share one space);
    ``e5`` uses the bundled multilingual-e5-small, ``openai`` an embeddings server.
    """
    with _build_lock():
        abandoned_builds_discard()
        return _search_indexes_build(dense_backend, progress)


def _search_indexes_build(dense_backend: str, progress: Progress) -> list[SearchIndex]:
    tokenizer = legal_tokenizer()
    # jieba is the slow part: tokenize every document once, for BM25 and LSA alike.
    targets = (SearchIndex.Target.ARTICLES, SearchIndex.Target.PRECEDENTS)
    texts = {t: DOCUMENTS[t]() for t in targets}
    for t in targets:
        if progress:
            progress(f"tokenizing {len(texts[t][0])} {t}")
    documents = {t: (texts[t][0], tokenizer.tokens_many(texts[t][1])) for t in targets}
    built = [bm25_index_build(target=t, tokenizer=tokenizer, documents=documents[t], texts=texts[t][1], progress=progress)
             for t in targets]
    from lexlib.search.embeddings import LSABackend, get_backend

    artefact_dir = ""
    lsa = dense_backend == "lsa"
    if lsa:
        all_tokens = documents[targets[0]][1] + documents[targets[1]][1]
        if progress:
            progress(f"training the LSA embedding on {len(all_tokens)} documents")
        backend = LSABackend(dim=min(256, max(2, len(all_tokens) - 1)), tokenizer=tokenizer).fit_tokens(all_tokens)
        directory = Path(settings.MEDIA_ROOT) / "models" / backend.model_id
        backend.save(directory)
        artefact_dir = str(directory)
    else:
        backend = get_backend(dense_backend)
    for target in targets:
        built.append(dense_index_build(target=target, backend=backend, backend_name=dense_backend, artefact_dir=artefact_dir,
                                       progress=progress, tokens=documents[target][1] if lsa else None))
    return built


def search_index_drop(*, index: SearchIndex) -> None:
    """Remove an inactive index, its vectors, HNSW index and artefacts."""
    if index.active:
        raise ValueError("refusing to drop the active index; build a replacement first")
    _drop_hnsw(index)
    index.delete()
    if index.artefact_dir:
        shutil.rmtree(index.artefact_dir, ignore_errors=True)


# --- following imports ----------------------------------------------------------------------------

FOLLOWED = {"case": (SearchIndex.Target.PRECEDENTS,), "statute": (SearchIndex.Target.ARTICLES,),
            "checklist": (SearchIndex.Target.ARTICLES,), "charges": (SearchIndex.Target.ARTICLES,)}


def search_indexes_follow(*, kind: str | None = None, progress: Progress = None) -> dict:
    """Bring the active indexes up to date with the corpus after an import, without a full rebuild.

    BM25: the documents that are new or whose text changed are tokenized and the index is rebuilt
    from the kept token lists of the others (the same scores a full rebuild gives); a new tokenizer
    (new charge names) means every document is tokenized again. Dense: the new or changed documents
    are embedded with the active index's own model and added to it; the model is not retrained
    (a full `build_search_indexes` does that). ``kind`` limits the work to the targets an import of
    that kind can change; None checks both.
    """
    targets = FOLLOWED.get(kind, ()) if kind else (SearchIndex.Target.ARTICLES, SearchIndex.Target.PRECEDENTS)
    result: dict = {}
    if not targets or not SearchIndex.objects.filter(target__in=targets, active=True).exists():
        return {"state": "not built"} if targets else {"state": "not affected"}
    try:
        with _build_lock():
            for target in targets:
                result[target] = _follow_target(target, progress)
    except IndexBuildBusy:
        return {"state": "busy", "detail": "another search index build was running; check the freshness panel"}
    return {"state": "followed", **result}


def _follow_target(target: str, progress: Progress) -> dict:
    ids, texts = DOCUMENTS[target]()
    hashes = [_text_hash(t) for t in texts]
    outcome = {}
    bm25 = SearchIndex.objects.filter(target=target, method=SearchIndex.Method.BM25, active=True).first()
    if bm25 is not None:
        outcome["bm25"] = _follow_bm25(bm25, target, ids, texts, hashes, progress)
    dense = SearchIndex.objects.filter(target=target, method=SearchIndex.Method.DENSE, active=True).first()
    if dense is not None:
        outcome["dense"] = _follow_dense(dense, ids, texts, progress)
    return outcome


def _follow_bm25(index: SearchIndex, target: str, ids, texts, hashes, progress: Progress) -> str:
    tokenizer = legal_tokenizer()
    kept = _tokens_load(index.artefact_dir) if index.model_id == f"bm25-jieba-{tokenizer.fingerprint()}" else None
    if kept is not None and index.documents == len(ids) and all(kept.get(i, ("",))[0] == h for i, h in zip(ids, hashes)):
        return "up to date"
    if kept is None:
        if progress:
            progress(f"tokenizing all {len(ids)} {target} (new tokenizer or no kept tokens)")
        bm25_index_build(target=target, tokenizer=tokenizer, documents=(ids, tokenizer.tokens_many(texts)), texts=texts)
        _superseded_bm25_drop(target)
        return f"rebuilt over {len(ids)} documents"
    stale = [n for n, (i, h) in enumerate(zip(ids, hashes)) if kept.get(i, ("",))[0] != h]
    if progress:
        progress(f"tokenizing {len(stale)} new or changed {target}")
    fresh = dict(zip(stale, tokenizer.tokens_many([texts[n] for n in stale])))
    tokens = [fresh[n] if n in fresh else kept[i][1] for n, i in enumerate(ids)]
    bm25_index_build(target=target, tokenizer=tokenizer, documents=(ids, tokens), texts=texts)
    _superseded_bm25_drop(target)
    return f"{len(stale)} documents added or changed, {len(ids)} in all"


def _superseded_bm25_drop(target: str) -> None:
    """Every import makes a new BM25 index: keep the active one and the one before it (a search that
    read the old row a moment ago may still load it), and free the older ones' artefacts."""
    inactive = SearchIndex.objects.filter(target=target, method=SearchIndex.Method.BM25, active=False,
                                          status=SearchIndex.Status.READY).order_by("-finished_at", "-pk")
    for index in list(inactive[1:]):
        search_index_drop(index=index)


def _follow_dense(index: SearchIndex, ids, texts, progress: Progress) -> str:
    from apps.corpus.search_service import dense_backend_for

    stored = set(DenseVector.objects.filter(index=index).values_list("object_id", flat=True))
    wanted = set(ids)
    missing = [(i, t) for i, t in zip(ids, texts) if i not in stored]
    gone = stored - wanted
    if not missing and not gone:
        return "up to date"
    backend = dense_backend_for(index)
    with transaction.atomic():
        DenseVector.objects.filter(index=index, object_id__in=gone).delete()
        for start in range(0, len(missing), 256):
            chunk = missing[start:start + 256]
            vectors = backend.embed_passages([t for _, t in chunk])
            DenseVector.objects.bulk_create([DenseVector(index=index, object_id=i, vector=v) for (i, _), v in zip(chunk, vectors)])
            if progress:
                progress(f"embedded {min(start + 256, len(missing))}/{len(missing)} new {index.target}")
        SearchIndex.objects.filter(pk=index.pk).update(documents=len(wanted))
    return f"{len(missing)} documents embedded, {len(gone)} removed"

