"""The legal graph as the agents see it: plain, immutable values.

Identifiers are the relational primary keys (Precedent.pk for cases,
Article.pk for articles, Charge.pk for offences, ...), so a GraphStore over
Apache AGE and the in-memory one answer with the same values.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

DIMENSIONS = ("defendant", "behaviour", "victim", "mental")  # the four ontology dimensions


@dataclass(frozen=True)
class Term:
    months: int = 0
    life: bool = False
    death: bool = False
    # The kind of a fixed term when the law fixes it ("detention": 拘役, for articles that provide nothing heavier,
    # sentencing.detention_only); None: written by its length (worker/agents/wording.py).
    kind: str | None = None


@dataclass(frozen=True)
class ArticleNode:
    pk: int
    law: str
    number: int
    sub: int
    label: str
    charges: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArticleText:
    """One version of an article's text and its validity (None = open-ended)."""

    version_pk: int
    article_pk: int
    text: str
    valid_from: dt.date | None = None
    valid_to: dt.date | None = None

    def in_force_on(self, day: dt.date | None) -> bool:
        if day is None:
            return self.valid_to is None
        return (self.valid_from is None or self.valid_from <= day) and (self.valid_to is None or day <= self.valid_to)


@dataclass(frozen=True)
class ChecklistEntry:
    pk: int
    version_pk: int
    order: int
    question: str


@dataclass(frozen=True)
class InterpretationNode:
    pk: int
    source: str
    para: str
    text: str


@dataclass(frozen=True)
class CaseNode:
    pk: int
    ext_id: str
    charges: tuple[str, ...] = ()
    article_pks: tuple[int, ...] = ()
    term: Term | None = None
    court_level: str = ""
    features: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)
    # What the Punishment Severity Index (worker.agents.models.priors) needs beyond the term, when known.
    term_kind: str = ""  # 有期徒刑, 拘役, 管制, … ("" unknown)
    suspended: bool | None = None
    fine: int | None = None  # yuan


@dataclass(frozen=True)
class CommunityNode:
    pk: int
    level: int
    size: int
    summary: str
    top_charges: tuple[str, ...] = ()
