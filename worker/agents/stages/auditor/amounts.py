"""Amounts of money in the facts, against the standards the judicial interpretations set for an article.

Checklist items such as "是否达到数额较大标准" ask whether the amount of an offence reaches a standard
that no article states itself: the interpretations do ("盗窃公私财物价值一千元至三千元以上、三万元至十万元
以上……应当分别认定为刑法第二百六十四条规定的“数额较大”、“数额巨大”……"; "数额在五千元以上不满五万元的，
应当认定为刑法第一百九十六条规定的“数额较大”"). This module reads those standards, and the largest sum of
money the facts state, so the element check can decide such an item and quote both.

Where an interpretation gives a range for regional standards ("一千元至三千元以上"), the lowest end is
the standard read here: an amount at or above it reaches the standard in some region, which the verdict
says. The range's upper end is kept too (``Standard.everywhere``): an amount at or above it reaches the
tier in every region, which is what lets the tier's penalty clause bind a term (sentencing.tier_floor).
Only Chinese or Arabic numerals with 元 / 万元 / 亿元 are read; an amount given any other way is not
read, and the item is then left to the other rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from worker.agents.numerals import NUMERAL_CHARS, chinese_to_int, int_to_chinese

TIERS = ("数额较大", "数额巨大", "数额特别巨大")

_NUMBER = rf"(\d+(?:\.\d+)?|[{NUMERAL_CHARS}]+)"
# "3000元", "1.2万元", "人民币三万元", "五十万余元"; the unit may follow a range's first number ("一千元至三千元").
_AMOUNT = re.compile(_NUMBER + r"\s*(万|亿)?余?\s*元")
# A standard: the first amount of "A元(至B元)以上" or "A元以上不满B元".
_STANDARD = re.compile(_NUMBER + r"\s*(万|亿)?元(?:至" + _NUMBER + r"\s*(万|亿)?元)?以上")
_TIER_NAMED = re.compile(r"“(?:[^”]{0,6})?(数额(?:较大|巨大|特别巨大))”")
_CLAUSE = re.compile(r"[^；。\n]+")
_ARTICLE_NAMED = re.compile(rf"第([{NUMERAL_CHARS}]+)条")


@dataclass(frozen=True)
class Standard:
    tier: str  # 数额较大 | 数额巨大 | 数额特别巨大
    yuan: float  # the lowest amount that reaches it
    source: str  # the clause of the interpretation that sets it
    everywhere: float | None = None  # the amount that reaches it in every region (a range's upper end); None: yuan

    @property
    def reached_everywhere(self) -> float:
        """The least amount that reaches the tier in every region."""
        return self.yuan if self.everywhere is None else max(self.yuan, self.everywhere)


@dataclass(frozen=True)
class Amount:
    yuan: float
    span: tuple[int, int]  # where the facts state it
    text: str


def _value(number: str, unit: str | None) -> float | None:
    try:
        value = float(number)
    except ValueError:
        try:
            value = float(chinese_to_int(number))
        except ValueError:
            return None
    return value * {"万": 10_000, "亿": 100_000_000}.get(unit or "", 1)


def standards(texts: Iterable[str], article: int) -> dict[str, Standard]:
    """Tier → the lowest standard the interpretations ``texts`` set for Criminal Law ``article``.

    A clause counts when it names the tiers in quotes and the last article it names before them is this
    one, or it names none.
    Several amounts before several tiers with 分别 pair in order; otherwise one tier takes the clause's
    first amount."""
    found: dict[str, Standard] = {}
    wanted = int_to_chinese(article)
    for text in texts:
        for clause in _CLAUSE.findall(text or ""):
            tiers = _TIER_NAMED.findall(clause)
            if not tiers:
                continue
            first_tier = _TIER_NAMED.search(clause).start()
            named = _ARTICLE_NAMED.findall(clause[:first_tier])
            if named and named[-1] not in (wanted, str(article)):  # the standard of another article
                continue
            amounts = [(v, _value(m.group(3), m.group(4)) if m.group(3) else v) for m in _STANDARD.finditer(clause)
                       if (v := _value(m.group(1), m.group(2))) is not None]
            if not amounts:
                continue
            if "分别" in clause and len(amounts) >= len(tiers):
                pairs = list(zip(tiers, amounts))
            elif len(tiers) == 1:
                pairs = [(tiers[0], amounts[0])]
            else:
                continue
            for tier, (yuan, upper) in pairs:
                if tier not in TIERS:
                    continue
                known = found.get(tier)
                everywhere = max(upper or yuan, known.reached_everywhere if known else 0.0)
                if known is None or yuan < known.yuan:
                    found[tier] = Standard(tier=tier, yuan=yuan, source=clause.strip(), everywhere=everywhere)
                else:
                    found[tier] = replace(known, everywhere=everywhere)
    return found


def largest_amount(facts: str) -> Amount | None:
    """The largest sum of money the facts state (a total, where the facts give one, is the largest)."""
    best = None
    for m in _AMOUNT.finditer(facts):
        value = _value(m.group(1), m.group(2))
        if value is not None and (best is None or value > best.yuan):
            best = Amount(yuan=value, span=m.span(), text=m.group(0))
    return best


def lowest_standards(tables: Iterable[Mapping[str, Standard]]) -> dict[str, Standard]:
    """Per tier, the lowest standard of ``tables`` (the standards of several articles or charges: the amount
    reaches a tier when it reaches the lowest of them); the first of equal ones. Its ``everywhere`` is the highest
    of theirs: an amount reaches the tier everywhere only when it does by every table."""
    out: dict[str, Standard] = {}
    for table in tables:
        for tier, standard in table.items():
            known = out.get(tier)
            if known is None:
                out[tier] = standard
                continue
            everywhere = max(known.reached_everywhere, standard.reached_everywhere)
            out[tier] = replace(standard if standard.yuan < known.yuan else known, everywhere=everywhere)
    return out


def tiers_named(question: str) -> list[str]:
    """The amount tiers a checklist item asks about ("数额巨大或者数额特别巨大" → both)."""
    named = re.findall(r"数额(特别巨大|巨大|较大)", question)
    return [f"数额{n}" for n in dict.fromkeys(named)]


def yuan_text(value: float) -> str:
    return f"{value / 10_000:g}万元" if value >= 10_000 else f"{value:g}元"


# --- quantities the items state themselves ("海洛因或者甲基苯丙胺五十克以上", "罂粟五百株以上不满三千株") ---------------

SUBSTANCES = ("鸦片", "海洛因", "甲基苯丙胺", "冰毒", "氯胺酮", "吗啡", "可卡因", "大麻", "罂粟")
_GRAMS = {"克": 1.0, "千克": 1000.0, "公斤": 1000.0}
_QUANTITY_ITEM = re.compile(_NUMBER + r"(千克|公斤|克|株)以上(?:不满" + _NUMBER + r"(千克|公斤|克|株))?")
_BELOW_ITEM = re.compile(r"不满" + _NUMBER + r"(千克|公斤|克|株)")  # the lowest tier: "鸦片不满二百克"


@dataclass(frozen=True)
class QuantityRange:
    substances: tuple[str, ...]  # what the item counts
    unit: str  # "g" (a weight) or "株" (plants)
    low: float
    high: float | None  # "不满": below it
    text: str  # the item's own words, e.g. "五十克以上"


@dataclass(frozen=True)
class Quantity:
    value: float  # grams or plants
    span: tuple[int, int]
    text: str


def quantity_range(question: str) -> QuantityRange | None:
    """The quantity a checklist item states for named substances ("五十克以上", "十克以上不满五十克", and the lowest
    tier, "不满十克", from nothing up); None when it states none."""
    m = _QUANTITY_ITEM.search(question)
    if m is None and (below := _BELOW_ITEM.search(question)):
        substances = tuple(s for s in SUBSTANCES if s in question[: below.start()])
        high = _value(below.group(1), None)
        if not substances or high is None:
            return None
        return QuantityRange(substances=substances, unit="株" if below.group(2) == "株" else "g", low=0.0,
                             high=high * _GRAMS.get(below.group(2), 1.0), text=below.group(0))
    substances = tuple(s for s in SUBSTANCES if s in question[: m.start()]) if m else ()
    if m is None or not substances:
        return None
    low = _value(m.group(1), None)
    unit = "株" if m.group(2) == "株" else "g"
    high = _value(m.group(3), None) if m.group(3) else None
    if low is None or (m.group(3) and high is None) or (m.group(4) and ("株" if m.group(4) == "株" else "g") != unit):
        return None
    scale = _GRAMS.get(m.group(2), 1.0)
    return QuantityRange(substances=substances, unit=unit, low=low * scale,
                         high=high * _GRAMS.get(m.group(4), 1.0) if high is not None else None, text=m.group(0))


# Another name the facts give a substance by: 冰毒 is 甲基苯丙胺 (the test results say "检出甲基苯丙胺成分").
ALSO_CALLED = {"甲基苯丙胺": ("冰毒",)}
# Words of a sentence stating a seized drug's weight without naming it ("查获毒品可疑物十九包，称重共计16.55克").
_DRUG_WORDS = ("毒品", "可疑物", "晶体", "粉末", "颗粒", "片剂")
_WEIGHT = re.compile(_NUMBER + r"\s*(千克|公斤|克)")
_TOTAL_BEFORE = re.compile(r"(?:共计|合计|总计|累计|共重|总重|共)[^，,。；]{0,4}$")
_GROSS_BEFORE = re.compile(r"毛重[^，,。；、]{0,2}$")
# What may stand between two weights a sentence lists to be added: a few words, none that sets them against each
# other ("约有50克冰毒，但…称量只有22.3克").
_LISTED = re.compile(r"[^但只实即后]{0,15}")


def largest_quantity(facts: str, wanted: QuantityRange) -> Quantity | None:
    """The quantity of the item's substances the facts state, in the item's unit: for plants the largest count;
    for a weight, the largest a sentence gives them, a sentence's weights summed ("分别净重1.42克、329.10克";
    "白色晶体共重6.18克，圆形片剂共重8.63克").

    A weight counts when the nearest drug named before it in its sentence (else after it) is one of the item's
    substances, or when its sentence names no drug but speaks of one (毒品, 可疑物, 晶体 …) and the only drugs the
    facts name are the item's ("…白色晶体共重6.18克…。经鉴定，均检出甲基苯丙胺成分"). A gross weight (毛重) never
    counts; a total (共计, 共重 …) replaces the weights before it that it adds up; a weight repeated in a sentence
    counts once; weights far apart, or set against each other (但, 只, 实 …), are not added: the largest stands.
    Sentences are not added up: the facts often state one drug twice (bought, then seized) or recite the evidence
    of a weight again, so a total over the facts would count it twice."""
    if wanted.unit != "g":
        return _largest_plants(facts, wanted)
    wanted_names = {name for substance in wanted.substances for name in (substance, *ALSO_CALLED.get(substance, ()))}
    names = {name: name in wanted_names for name in (*SUBSTANCES, *wanted_names)}
    named_in_facts = {name for name in names if name in facts}
    only_wanted = bool(named_in_facts) and all(names[name] for name in named_in_facts)
    found = (_sentence_weight(m.group(0), m.start(), names, only_wanted) for m in _CLAUSE.finditer(facts))
    return max((q for q in found if q is not None), key=lambda q: q.value, default=None)


def _sentence_weight(sentence: str, offset: int, names: dict[str, bool], only_wanted: bool) -> Quantity | None:
    """The weight of the item's substances one sentence states (its total, or the sum of its weights), or None."""
    counted: list[Quantity] = []
    parts = 0  # the weights before the last total, which it may add up
    for m in _WEIGHT.finditer(sentence):
        value = _value(m.group(1), None)
        before = sentence[: m.start()]
        if value is None or _GROSS_BEFORE.search(before):
            continue
        nearest = _nearest_name(sentence, m.start(), m.end(), names)
        if nearest is None and not (only_wanted and any(word in sentence for word in _DRUG_WORDS)):
            continue
        if nearest is not None and not names[nearest]:
            continue
        span = (offset + m.start(), offset + m.end())
        quantity = Quantity(value=value * _GRAMS[m.group(2)], span=span, text=m.group(0))
        total = bool(_TOTAL_BEFORE.search(before))
        if total and parts and abs(sum(q.value for q in counted[-parts:]) - quantity.value) <= 0.01 * quantity.value:
            del counted[-parts:]  # "1克、2克、3克，共计6克": the total stands for them
        counted.append(quantity)
        parts = 0 if total else parts + 1
    distinct: dict[float, Quantity] = {}
    for quantity in counted:
        distinct.setdefault(quantity.value, quantity)  # a weight repeated in the sentence counts once
    counted = list(distinct.values())
    if len(counted) <= 1 or any(not _LISTED.fullmatch(sentence[a.span[1] - offset:b.span[0] - offset])
                                for a, b in zip(counted, counted[1:])):
        return max(counted, key=lambda q: q.value, default=None)
    value = sum(q.value for q in counted)
    return Quantity(value=value, span=counted[0].span,
                    text="、".join(q.text for q in counted) + f"，共{quantity_text(value, 'g')}")


def _nearest_name(sentence: str, start: int, end: int, names: Mapping[str, bool]) -> str | None:
    """The drug a weight is of: the nearest name before it, else after it, inside the brackets around the weight
    ("白色晶体1包（经鉴定，净重5.04克，检出氯胺酮成分）") and, when they name none, in the whole sentence."""
    opened, closed = sentence.rfind("（", 0, start), sentence.find("）", end)
    scopes = [(opened, closed)] if opened > sentence.rfind("）", 0, start) and closed != -1 else []
    for low, high in [*scopes, (0, len(sentence))]:
        before, after = sentence[low:start], sentence[end:high]
        preceding = max(((before.rfind(name), name) for name in names if name in before), default=None)
        following = min(((after.find(name), name) for name in names if name in after), default=None)
        if preceding or following:
            return (preceding or following)[1]
    return None


def _largest_plants(facts: str, wanted: QuantityRange) -> Quantity | None:
    names = "|".join(wanted.substances)
    pattern = re.compile(rf"(?:{names})[^。；]{{0,12}}?{_NUMBER}\s*株|{_NUMBER}\s*株[^。；]{{0,6}}?(?:{names})")
    best = None
    for m in pattern.finditer(facts):
        value = _value(m.group(1) or m.group(2), None)
        if value is not None and (best is None or value > best.value):
            best = Quantity(value=value, span=m.span(), text=m.group(0))
    return best


def quantity_text(value: float, unit: str) -> str:
    return f"{value:g}株" if unit == "株" else (f"{value / 1000:g}千克" if value >= 1000 else f"{value:g}克")
