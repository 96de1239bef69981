"""The contamination filter of training exports: a training case whose normalised facts share a run of
``n`` characters with an evaluation fact is dropped, court boilerplate (an n-gram many training facts
share) excepted. Used by training/sft_export.py, training/trajectories.py and the approved-run export
(apps/review/services/export.py)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

__all__ = ["boilerplate", "contamination_index", "is_contaminated", "ngrams", "normalise"]

_DROP = re.compile(r"[\s\W_]+", re.UNICODE)


def normalise(text: str) -> str:
    """NFKC, then no whitespace, punctuation or symbols (masks such as × disappear too)."""
    return _DROP.sub("", unicodedata.normalize("NFKC", text))


def ngrams(text: str, n: int) -> Iterator[str]:
    text = normalise(text)
    if len(text) < n:
        yield text
        return
    for i in range(len(text) - n + 1):
        yield text[i:i + n]


def contamination_index(facts: Iterable[str], n: int) -> set[str]:
    index: set[str] = set()
    for fact in facts:
        index.update(ngrams(fact, n))
    return index


def is_contaminated(fact: str, index: set[str], n: int) -> bool:
    return any(gram in index for gram in ngrams(fact, n))


def boilerplate(facts: Iterable[str], index: set[str], n: int, max_cases: int) -> set[str]:
    """The evaluation n-grams that more than ``max_cases`` training facts contain."""
    counts: dict[str, int] = {}
    for fact in facts:
        for gram in set(ngrams(fact, n)) & index:
            counts[gram] = counts.get(gram, 0) + 1
    return {gram for gram, count in counts.items() if count > max_cases}
