"""Sentences written as a Chinese criminal judgment writes them: 有期徒刑一年五个月, 拘役三个月,
管制一年, 有期徒刑三年，缓刑四年, 无期徒刑, 死刑 — and the same in English; and a judicial
interpretation's paragraph as it is cited (its source, its number, its text).

Pure functions (no Django), used by the pages, the memo, the CSV export and the Adjudicator.

The kind of a fixed term follows the Criminal Law's ranges when the prediction does not name it:
拘役 runs from one to six months (art. 42), 有期徒刑 from six months (art. 45), so a term under six
months is written as 拘役 and six months or more as 有期徒刑. 管制 (three months to two years,
art. 38) is never inferred from a length: it is written only when the kind says so. Probation
(缓刑, art. 72-73) is written only when a probation length is given.
"""

from __future__ import annotations

from worker.agents.numerals import int_to_chinese

FIXED = "fixed"  # 有期徒刑
DETENTION = "detention"  # 拘役
CONTROL = "control"  # 管制
KINDS = (FIXED, DETENTION, CONTROL)

DETENTION_MAX_MONTHS = 6  # art. 42: 拘役 at most six months
_ZH_KIND = {FIXED: "有期徒刑", DETENTION: "拘役", CONTROL: "管制"}
_EN_KIND = {FIXED: "fixed-term imprisonment", DETENTION: "criminal detention", CONTROL: "public surveillance"}
_KIND_OF_NAME = {name: kind for kind, name in _ZH_KIND.items()}


def kind_named(name: str | None) -> str | None:
    """The kind a court's own word names ("拘役" → "detention"), for terms stored with it (a precedent's outcome);
    None for any other word or none."""
    return _KIND_OF_NAME.get((name or "").strip())


def term_kind(months: int, kind: str | None = None) -> str:
    """The kind of a fixed term: the given one, else 拘役 under six months and 有期徒刑 from six."""
    if kind is not None:
        if kind not in KINDS:
            raise ValueError(f"unknown term kind {kind!r}")
        return kind
    return DETENTION if months < DETENTION_MAX_MONTHS else FIXED


def duration_zh(months: int) -> str:
    """17 → 一年五个月, 12 → 一年, 3 → 三个月, 24 → 二年 (a judgment writes 二年, never 两年)."""
    if isinstance(months, bool) or not isinstance(months, int) or months < 0:
        raise ValueError(f"not a number of months: {months!r}")
    years, rest = divmod(months, 12)
    text = f"{int_to_chinese(years)}年" if years else ""
    if rest or not years:
        text += f"{int_to_chinese(rest)}个月"
    return text


def duration_en(months: int) -> str:
    """17 → 1 year and 5 months, 12 → 1 year, 3 → 3 months."""
    if isinstance(months, bool) or not isinstance(months, int) or months < 0:
        raise ValueError(f"not a number of months: {months!r}")
    years, rest = divmod(months, 12)
    parts = []
    if years:
        parts.append(f"{years} year" + ("s" if years != 1 else ""))
    if rest or not years:
        parts.append(f"{rest} month" + ("s" if rest != 1 else ""))
    return " and ".join(parts)


def term_wording(months: int | None, *, life: bool = False, death: bool = False, kind: str | None = None,
                 probation_months: int | None = None, lang: str = "zh") -> str:
    """The main penalty as a judgment states it, in Chinese (``lang="zh"``) or English (``"en"``).

    ``months`` None (no term predicted) gives ""; 0 months without life or death is "no custodial
    sentence" (免予刑事处罚 is a court's decision this function cannot know of).
    """
    if lang not in ("zh", "en"):
        raise ValueError(f"unknown language {lang!r}")
    zh = lang == "zh"
    if death:
        return "死刑" if zh else "death penalty"
    if life:
        return "无期徒刑" if zh else "life imprisonment"
    if months is None:
        return ""
    if months == 0:
        return "不判处监禁刑" if zh else "no custodial sentence"
    kind = term_kind(months, kind)
    if zh:
        text = _ZH_KIND[kind] + duration_zh(months)
        if probation_months:
            text += "，缓刑" + duration_zh(probation_months)
        return text
    text = f"{duration_en(months)} of {_EN_KIND[kind]}"
    if probation_months:
        text += f", suspended for {duration_en(probation_months)}"
    return text


def term_of(term: dict | None, *, lang: str = "zh") -> str:
    """``term_wording`` for a term as bundles and results store it ({months, life, death, kind?, probation_months?})."""
    if not term:
        return ""
    months = term.get("months")
    return term_wording(None if months is None else int(months), life=bool(term.get("life")),
                        death=bool(term.get("death")), kind=term.get("kind") or None,
                        probation_months=term.get("probation_months") or None, lang=lang)


def interpretation_line(source: str, para: str, text: str) -> str:
    """"<source><para>　<text>", the paragraph's number said once: most texts of the corpus (and all of the demo's)
    open with their own number ("第一条　盗窃数额…"), which the line would otherwise repeat."""
    body = (text or "").strip()
    if para and body.startswith(para):
        body = body[len(para):].lstrip(" 　")
    return f"{source}{para}　{body}"
