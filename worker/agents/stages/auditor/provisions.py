"""Unit-crime, definition and punishment provisions: articles that define no charge but go with one, read from the
statute text.

A unit-crime provision (150, 200, 211, 220, 231, 346, 366: "单位犯本节第X条至第Y条规定之罪的，对单位判处罚金，
并对其直接负责的主管人员和其他直接责任人员…处罚") applies beside an article in its scope when a unit committed
the offence: the facts name the defendant unit (被告单位) or the persons directly responsible for it. Its
scope is the articles its text names, ranges included.

The Researcher adds the unit-crime provisions of the candidates when the facts show a unit crime; the
statistical Auditor decides them by the rule here; the Adjudicator cites a verified one beside the article
of its scope it goes with.

A definition provision (357: "本法所称的毒品，是指鸦片、海洛因…"; 367: "本法所称淫秽物品，是指…") says what a term
of other articles means. It goes with a candidate whose text uses its term (357 with 347, which punishes selling
毒品), and it applies when the facts show what it defines: one of its checklist items ("是否属于海洛因") is shown.
The Researcher adds the definition provisions of the candidates; the statistical Auditor decides them by that rule.
The Adjudicator cites a verified one as it cites any article defining no charge: when the precedents convicted of
the chosen charge cite it (most drug judgments do not cite 357); verified, it stays in the evidence chain.

A punishment provision (383: "对犯贪污罪的，根据情节轻重，分别依照下列规定处罚"; 386: "对犯受贿罪的…依照本法第三百八十三条的规定
处罚"; 390: "对犯行贿罪的，处五年以下有期徒刑…") gives the penalty of an offence another article defines (382, 385, 389):
it applies when that article does, and so does a provision an applying article punishes by (383 for a bribe, through
386). Its own checklist asks for the penalty's tiers ("是否贪污数额较大"), which a bribery's facts never show.
The Researcher adds the punishment provisions of the candidates' charges, and those they punish by, so that a
bribery whose precedents happen not to cite 386 still has it to decide.

A negligence provision ("过失犯前款罪的", 115's second paragraph: 失火罪 beside 放火罪) punishes the careless form of
the offence its article's first paragraph defines. One act is done with intent or by carelessness, not both: when
the facts show the carelessness (its item asking for 过失 is shown), the Adjudicator cites it and not the articles of
the intentional offence (115, and 114 which shares its charges).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from worker.agents.numerals import find_article_ranges, find_article_refs, in_ranges

# How facts show that a unit committed the offence: the defendant unit, or the persons the unit-crime
# provisions punish for it. Counted on the training corpus (../shared/data/cases.jsonl), among the records
# citing an article some unit-crime provision covers: "被告单位" occurred in 11 of the 21 that also cite the
# provision and in 3 of the 1,214 that do not; "直接负责的主管人员" in 2 and 0, "直接责任人员" in 1 and 0.
UNIT_CRIME = r"被告单位|单位犯罪|直接负责的主管人员|其他直接责任人员|直接责任人员"
UNIT_CRIME_RE = re.compile(UNIT_CRIME)
UNIT_ITEM_RE = re.compile(r"单位犯罪")  # the checklist item of a unit-crime provision that asks for the unit
_UNIT_CLAUSE = re.compile(r"^\s*单位犯(?:本节|本章)?(.{1,160}?)规定之罪")

# How a definition opens (both GraphStores list the texts that do: GraphStore.definitions; the same pattern in Python
# and PostgreSQL). "本法所称的毒品，是指", "本章所称战时，是指": the term is what comes between 所称 and 是指.
DEFINITION_OPENING = r"^\s*本(?:法|章|节)所称"
_DEFINITION = re.compile(DEFINITION_OPENING + r"的?([^，,。；\s]{1,12})，是指")

Key = tuple[int, int]  # (number, sub): 219之一 is (219, 1)


@dataclass(frozen=True)
class UnitScope:
    """The articles a unit-crime provision names: single ones and ranges (ends included)."""

    singles: frozenset[Key]
    ranges: tuple[tuple[Key, Key], ...]

    def covers(self, key: Key) -> bool:
        return key in self.singles or in_ranges(key, self.ranges)


def unit_scope(text: str) -> UnitScope | None:
    """The scope of a unit-crime provision; None when ``text`` is not one."""
    match = _UNIT_CLAUSE.match(text or "")
    if not match:
        return None
    clause = match.group(1)
    ranges = tuple(find_article_ranges(clause))
    singles = frozenset(find_article_refs(clause))
    if not ranges and not singles:
        return None
    return UnitScope(singles=singles, ranges=ranges)


def unit_crime_shown(facts: str) -> tuple[int, int] | None:
    """The span of the first words that show a unit crime; None when the facts show none."""
    match = UNIT_CRIME_RE.search(facts or "")
    return match.span() if match else None


def key_of(key: str) -> Key:
    """"219-1" -> (219, 1); "264" -> (264, 0) (ArticleAudit.key)."""
    number, _, sub = key.partition("-")
    return int(number), int(sub or 0)


def defined_term(text: str) -> str | None:
    """The term a definition provision defines ("毒品" for 357); None when ``text`` is not one."""
    match = _DEFINITION.match(text or "")
    return match.group(1) if match else None


# How a punishment provision opens (GraphStore.opening_with reads it in Python and PostgreSQL alike): "对犯贪污罪的".
PUNISHMENT_OPENING = r"^\s*对犯"
_PUNISHES = re.compile(PUNISHMENT_OPENING + r"(.{1,20}?罪)的")
# "依照本法第三百八十三条的规定处罚" punishes by that article; "依照…的规定定罪处罚" convicts under it instead.
_PUNISHED_BY = re.compile(r"依照本法((?:第[一二三四五六七八九十百零]+条(?:之[一二三四五六七八九十]+)?、?)+)的规定处罚")


# A negligence provision: "过失犯前款罪的，处…" (115's second paragraph, which the statutes key 115-1; 119-1, 124-1,
# 369-1, 370-1) punishes the careless form of the offence its article's first paragraph defines.
_NEGLIGENT_FORM = re.compile(r"^\s*过失犯前款罪")


def negligent_form(text: str) -> bool:
    """``text`` punishes the careless form of the offence of its article's first paragraph."""
    return bool(_NEGLIGENT_FORM.match(text or ""))


# A sentence telling what a party argues, not what happened: "被告人…认为…属过失放火", "辩护人提出…". Counted on the
# training corpus (../shared/data/cases.jsonl), among the 92 cases of the offences with a negligence provision and
# their careless forms: a sentence wording carelessness (elements' 过失, features' 过失) that is no argument occurs
# in 13 of the 20 careless ones and 2 of the 72 intentional ones; one intentional case words it only in a plea.
ARGUMENT = re.compile(r"认为|辩称|辩解|辩护|提出")


def carelessness_shown(question: str, satisfied: bool, sentence: str) -> bool:
    """A negligence provision's item asking for 过失 is shown, by a sentence that is no party's argument."""
    return satisfied and "过失" in question and not ARGUMENT.search(sentence or "")


def punished_charge(text: str) -> str | None:
    """The offence a punishment provision gives the penalty of ("贪污罪" for 383); None when ``text`` is not one."""
    match = _PUNISHES.match(text or "")
    return match.group(1) if match else None


def punished_by(text: str) -> set[Key]:
    """The articles ``text`` punishes by ("依照本法第三百八十三条的规定处罚": {(383, 0)})."""
    return {ref for match in _PUNISHED_BY.finditer(text or "") for ref in find_article_refs(match.group(1))}
