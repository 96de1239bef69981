"""Duplicate detection for precedent facts: a normalised-text hash and near-duplicate shingles.

The same judgment reaches us many times: a CAIL record and a LeCaRD query of the
same case, one anonymised as 张某 and the other as 张某某, with ×× masks or
different punctuation. Importing both would count the case twice in every
retrieval and in training, so an import merges them into the precedent it
already has and says so in its report.

* **Exact**: facts whose normalised text is identical. Normalisation is NFKC,
  then every whitespace, punctuation (P*) and symbol (S*, including the CAIL
  mask "×") character is removed.
* **Near**: 20-character shingles of the normalised text. Shingles that occur
  in more than BOILERPLATE_DF facts are prosecutorial boilerplate and ignored;
  two facts are near duplicates when at least NEAR_CONTAINMENT of the
  informative shingles of the shorter one are shared. Short facts (at most
  SHORT_CHARS normalised characters) get a second pass with 10-character
  shingles, where SHORT_CONTAINMENT of the shingles must be shared *and*
  difflib must find the texts SHORT_RATIO similar: ten characters are too few
  to tell two different short thefts apart on shingles alone.

The shingle arithmetic is done with numpy over all facts at once (a rolling
polynomial hash over the concatenated code points), because the stored corpus
is compared on every import: a Python loop over its five million shingles
took minutes, this takes seconds.
"""

from __future__ import annotations

import difflib
import hashlib
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

SHINGLE = 20
BOILERPLATE_DF = 25
NEAR_CONTAINMENT = 0.5
SHORT_CHARS = 400
SHORT_SHINGLE = 10
SHORT_CONTAINMENT = 0.6
SHORT_RATIO = 0.95

_BASE = np.uint64(1_000_003)


@lru_cache(maxsize=1)
def _deletions() -> dict[int, None]:
    """str.translate table deleting whitespace, punctuation and symbols (built once per process)."""
    table: dict[int, None] = {}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if char.isspace() or unicodedata.category(char)[0] in "PS":
            table[code] = None
    return table


def norm_text(text: str) -> str:
    """NFKC, without whitespace, punctuation or symbols: what two copies of one fact have in common."""
    return unicodedata.normalize("NFKC", text).translate(_deletions())


def norm_sha256(text: str) -> str:
    """The exact-duplicate key of a fact."""
    return hashlib.sha256(norm_text(text).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NearMatch:
    new: int  # index into the new texts
    other: int  # index into the stored texts (stored=True) or into the new texts (an earlier one)
    stored: bool
    containment: float


def _shingle_hashes(texts: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """(document index, shingle hash) of every k-character window, sorted by hash then document,
    one row per distinct pair."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    if not len(texts) or lengths.max(initial=0) < k:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    windows = codes.size - k + 1
    hashes = np.zeros(windows, dtype=np.uint64)
    with np.errstate(over="ignore"):  # arithmetic modulo 2**64 is the point
        for j in range(k):
            hashes = hashes * _BASE + codes[j:j + windows]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    counts = np.maximum(lengths - k + 1, 0)
    docs = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    # Window positions inside each document: a window never crosses into the next fact.
    offsets = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    hashes = hashes[np.repeat(starts, counts) + offsets]
    # docs is ascending, so a stable sort by hash orders by (hash, document).
    order = np.argsort(hashes, kind="stable")
    docs, hashes = docs[order], hashes[order]
    distinct = np.ones(docs.size, dtype=bool)
    distinct[1:] = (hashes[1:] != hashes[:-1]) | (docs[1:] != docs[:-1])
    return docs[distinct], hashes[distinct]


def _pairs_over(texts: Sequence[str], n_new: int, k: int, threshold: float) -> list[tuple[int, int, float]]:
    """Pairs (a, b, containment), a < b, b among the new texts (the last n_new), whose shared
    informative k-shingles are at least ``threshold`` of the smaller text's informative ones."""
    docs, hashes = _shingle_hashes(texts, k)
    if not docs.size:
        return []
    # hashes are sorted: each group of equal hashes is one shingle, df its number of facts.
    first = np.flatnonzero(np.concatenate([[True], hashes[1:] != hashes[:-1]]))
    df = np.diff(np.append(first, hashes.size))
    n_info = np.bincount(docs[np.repeat(df <= BOILERPLATE_DF, df)], minlength=len(texts))
    # Only groups holding a new text and at least two texts can give a pair we care about.
    first_new = len(texts) - n_new
    has_new = np.maximum.reduceat((docs >= first_new).astype(np.int8), first)
    wanted = (df >= 2) & (df <= BOILERPLATE_DF) & (has_new > 0)
    # Every unordered pair of members of each wanted group, built without a Python loop: the
    # member of rank r in a group of g is paired with the g - 1 - r members after it.
    member = np.flatnonzero(np.repeat(wanted, df))
    rank = member - np.repeat(first, df)[member]
    after = np.repeat(df, df)[member] - 1 - rank
    left = np.repeat(member, after)
    right = left + np.arange(after.sum(), dtype=np.int64) - np.repeat(np.cumsum(after) - after, after) + 1
    a, b = np.minimum(docs[left], docs[right]), np.maximum(docs[left], docs[right])
    keep = b >= first_new
    n = len(texts)
    keys, shared = np.unique(a[keep] * n + b[keep], return_counts=True)
    a, b = keys // n, keys % n
    smaller = np.minimum(n_info[a], n_info[b])
    containment = shared / np.maximum(smaller, 1)
    over = (smaller > 0) & (containment >= threshold)
    return list(zip(a[over].tolist(), b[over].tolist(), containment[over].tolist()))


def near_duplicates(stored: Sequence[str], new: Sequence[str]) -> dict[int, NearMatch]:
    """For each new text that is a near duplicate, what it duplicates (normalised texts in, see norm_text).

    A stored text is preferred over an earlier new one; among several, the one sharing the
    largest share of shingles (then the earliest). A new text only duplicates an earlier new
    text that is itself kept, so chains do not collapse distinct cases into one.
    """
    texts = list(stored) + list(new)
    n_stored = len(stored)
    candidates: dict[int, list[tuple[float, int]]] = {}
    for a, b, containment in _pairs_over(texts, len(new), SHINGLE, NEAR_CONTAINMENT):
        candidates.setdefault(b - n_stored, []).append((containment, a))
    short = [i for i, t in enumerate(texts) if len(t) <= SHORT_CHARS]
    short_new = sum(1 for i in short if i >= n_stored)
    if short_new:
        for a, b, containment in _pairs_over([texts[i] for i in short], short_new, SHORT_SHINGLE, SHORT_CONTAINMENT):
            a, b = short[a], short[b]
            if difflib.SequenceMatcher(None, texts[a], texts[b], autojunk=False).ratio() >= SHORT_RATIO:
                candidates.setdefault(b - n_stored, []).append((containment, a))

    matches: dict[int, NearMatch] = {}
    for position in sorted(candidates):
        options = sorted(candidates[position], key=lambda c: (c[1] >= n_stored, -c[0], c[1]))
        for containment, other in options:
            if other >= n_stored and (other - n_stored) in matches:
                continue  # that earlier new text is itself merged away
            is_stored = other < n_stored
            matches[position] = NearMatch(position, other if is_stored else other - n_stored, is_stored,
                                          round(float(containment), 3))
            break
    return matches
