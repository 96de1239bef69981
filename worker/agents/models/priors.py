"""Precedent priors for the agentic mode (pure): court authority and the Punishment Severity Index.

Authority: a precedent decided by a higher court weighs more when precedents are ranked
for sentencing — high court 1.1, intermediate court 1.05, basic court 1.0. A court level
that is not known (most of the corpus: CAIL facts do not name the court) counts 1.0, like a
basic court, so an unknown level never outranks a known one. The supreme court, which the
issue does not rate, gets the high court's 1.1: it is at least as authoritative, and giving
it more would be a number we cannot justify.

Punishment Severity Index (PSI): one number, in days, for a whole sentence, so that
sentences of different kinds compare on one scale:

    PSI = main_days × type_coefficient × suspension_factor + supplementary_days

- main_days: fixed-term imprisonment, criminal detention (拘役) and public surveillance
  (管制) in months × 30; life imprisonment counts as 25 years (the ceiling of combined
  fixed terms, Criminal Law art. 69) and death as 2 × that, death with a two-year reprieve
  (死缓) as 1.6 ×;
- type_coefficient: imprisonment 1.0; detention 0.9 (served locally, with home leave,
  art. 43); surveillance 0.5 (no custody: art. 41 counts one day in custody as two days
  of surveillance); life, death and reprieve 1.0 (their severity is in main_days);
- suspension_factor: 0.4 for a suspended sentence (缓刑: not served unless probation fails),
  else 1.0;
- supplementary_days: a fine on a log scale, FINE_DAYS × log2(1 + fine / FINE_UNIT)
  (1,000 yuan → 30 days, 3,000 → 60, 7,000 → 90: each doubling of the fine adds as much as
  the first thousand); deprivation of political rights at 0.1 day per day; confiscation of
  property a flat 90 days.

These coefficients are design values stated here, not fitted to any data set.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

AUTHORITY = {"high": 1.1, "intermediate": 1.05, "basic": 1.0, "supreme": 1.1}
DAYS_PER_MONTH = 30
LIFE_DAYS = 25 * 12 * DAYS_PER_MONTH  # 9,000
DEATH_DAYS = 2 * LIFE_DAYS  # 18,000
REPRIEVE_DAYS = round(1.6 * LIFE_DAYS)  # 14,400
TYPE_COEFFICIENT = {"imprisonment": 1.0, "detention": 0.9, "surveillance": 0.5, "life": 1.0, "death": 1.0,
                    "death_reprieve": 1.0, "exempt": 0.0, "fine_only": 0.0}
SUSPENDED_FACTOR = 0.4
FINE_DAYS = 30.0
FINE_UNIT = 1000.0  # yuan
RIGHTS_FACTOR = 0.1
CONFISCATION_DAYS = 90.0

# The dataset's Chinese names of the main penalty (cases.jsonl term.kind, PrecedentOutcome.term_kind).
KIND_NAMES = {"有期徒刑": "imprisonment", "拘役": "detention", "管制": "surveillance", "无期徒刑": "life",
              "死刑": "death", "死刑缓期二年执行": "death_reprieve", "死缓": "death_reprieve",
              "免予刑事处罚": "exempt", "单处罚金": "fine_only"}


def authority(court_level: str | None) -> float:
    """The authority prior of a precedent's court level (1.0 when unknown)."""
    return AUTHORITY.get((court_level or "").strip().lower(), 1.0)


@dataclass(frozen=True)
class Sentence:
    kind: str = "imprisonment"  # a key of TYPE_COEFFICIENT
    months: int = 0  # imprisonment, detention or surveillance
    suspended: bool = False
    fine: float = 0.0  # yuan
    rights_months: int = 0  # deprivation of political rights
    confiscation: bool = False

    def __post_init__(self):
        if self.kind not in TYPE_COEFFICIENT:
            raise ValueError(f"unknown penalty kind {self.kind!r}; use one of {', '.join(TYPE_COEFFICIENT)}")
        if self.months < 0 or self.fine < 0 or self.rights_months < 0:
            raise ValueError("a sentence has no negative parts")


def main_days(sentence: Sentence) -> float:
    if sentence.kind == "life":
        return float(LIFE_DAYS)
    if sentence.kind == "death":
        return float(DEATH_DAYS)
    if sentence.kind == "death_reprieve":
        return float(REPRIEVE_DAYS)
    if sentence.kind in ("exempt", "fine_only"):
        return 0.0
    return float(sentence.months * DAYS_PER_MONTH)


def fine_days(fine: float) -> float:
    return FINE_DAYS * math.log2(1.0 + max(fine, 0.0) / FINE_UNIT)


def psi(sentence: Sentence) -> float:
    """The Punishment Severity Index of a sentence, in day-equivalents (see the module doc)."""
    factor = SUSPENDED_FACTOR if sentence.suspended else 1.0
    main = main_days(sentence) * TYPE_COEFFICIENT[sentence.kind] * factor
    extra = fine_days(sentence.fine) + RIGHTS_FACTOR * sentence.rights_months * DAYS_PER_MONTH
    extra += CONFISCATION_DAYS if sentence.confiscation else 0.0
    return round(main + extra, 3)


def sentence_of(term, *, kind: str = "", suspended: bool | None = None, fine: float | None = None) -> Sentence | None:
    """A Sentence from a pipeline/graph Term (months, life, death) and what else is known.

    ``kind`` is a dataset name (有期徒刑, 拘役, …) or a TYPE_COEFFICIENT key; CAIL's months mix
    imprisonment and detention, so an unknown kind counts as imprisonment."""
    if term is None:
        return None
    get = term.get if isinstance(term, dict) else (lambda name, default=None: getattr(term, name, default))
    named = KIND_NAMES.get(kind, kind if kind in TYPE_COEFFICIENT else "")
    if get("death", False):
        named = "death_reprieve" if named == "death_reprieve" else "death"
    elif get("life", False):
        named = "life"
    elif not named or named in ("life", "death", "death_reprieve"):
        named = "imprisonment"
    months = int(get("months", 0) or 0) if named in ("imprisonment", "detention", "surveillance") else 0
    if named == "imprisonment" and months == 0 and (fine or 0) > 0:
        named = "fine_only"
    return Sentence(kind=named, months=months, suspended=bool(suspended), fine=float(fine or 0.0))


def psi_months(value: float) -> float:
    """A PSI shown as months of unsuspended imprisonment (days / 30)."""
    return round(value / DAYS_PER_MONTH, 1)


@dataclass(frozen=True)
class RankedPrecedent:
    pk: int
    similarity: float
    authority: float
    shares_charge: bool
    psi: float | None
    score: float


def rank_for_sentencing(cases: Iterable[tuple[object, float]], charges: Iterable[str] = (),
                        matches=None) -> list[RankedPrecedent]:
    """Precedents (CaseNode, similarity) ranked for sentencing: similarity × authority, and halved when
    the precedent shares none of ``charges`` (its sentence is for another offence). Ties by pk."""
    wanted = list(charges)
    same = matches or (lambda a, b: a == b)
    ranked = []
    for node, similarity in cases:
        shares = not wanted or any(same(w, c) for w in wanted for c in node.charges)
        prior = authority(getattr(node, "court_level", ""))
        sentence = sentence_of(node.term, kind=getattr(node, "term_kind", ""), suspended=getattr(node, "suspended", None),
                               fine=getattr(node, "fine", None))
        score = max(float(similarity), 0.0) * prior * (1.0 if shares else 0.5)
        ranked.append(RankedPrecedent(pk=node.pk, similarity=round(float(similarity), 6), authority=prior,
                                      shares_charge=shares, psi=psi(sentence) if sentence else None,
                                      score=round(score, 6)))
    return sorted(ranked, key=lambda r: (-r.score, r.pk))


def sentencing_reference(ranked: list[RankedPrecedent], n: int = 3) -> dict:
    """The score-weighted mean PSI of the best ``n`` ranked precedents that share a charge and have a
    known sentence: the severity the authoritative, similar precedents point to."""
    usable = [r for r in ranked if r.psi is not None and r.shares_charge and r.score > 0][:n]
    if not usable:
        return {}
    total = sum(r.score for r in usable)
    value = sum(r.psi * r.score for r in usable) / total
    return {"psi": round(value, 3), "months_equivalent": psi_months(value), "precedents": [r.pk for r in usable]}
