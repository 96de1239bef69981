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
    """The quantity a checklist item states for named substances; None when it states none."""
    m = _QUANTITY_ITEM.search(question)
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


def largest_quantity(facts: str, wanted: QuantityRange) -> Quantity | None:
    """The largest quantity of the item's substances the facts state, in the item's unit."""
    names = "|".join(wanted.substances)
    if wanted.unit == "g":
        pattern = re.compile(rf"(?:{names})[^。；]{{0,30}}?{_NUMBER}\s*(千克|公斤|克)")
    else:
        pattern = re.compile(rf"(?:{names})[^。；]{{0,12}}?{_NUMBER}\s*株|{_NUMBER}\s*株[^。；]{{0,6}}?(?:{names})")
    best = None
    for m in pattern.finditer(facts):
        if wanted.unit == "g":
            value = _value(m.group(1), None)
            value = value * _GRAMS[m.group(2)] if value is not None else None
        else:
            value = _value(m.group(1) or m.group(2), None)
        if value is not None and (best is None or value > best.value):
            best = Quantity(value=value, span=m.span(), text=m.group(0))
    return best


def quantity_text(value: float, unit: str) -> str:
    return f"{value:g}株" if unit == "株" else (f"{value / 1000:g}千克" if value >= 1000 else f"{value:g}克")
