"""Chinese numerals and Criminal Law article labels.

Statutes, interpretations and judgments cite provisions as "第二百六十六条",
"第一百三十三条之一" or, in newer drafting, "第266条".  Everything downstream keys
provisions by `article_key(number, sub)` ("266", "133-1"), so this module is the
single place where the written forms are turned into integers and back.

The parser is deliberately strict: a mis-read article number silently links a
case to the wrong law, which is worse than refusing the input.
"""

from __future__ import annotations

import re

# Both 零 and 〇 are written for zero (〇 mostly in dates such as 二〇二〇).
_ZEROS = "零〇"
_DIGITS: dict[str, int] = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
    # Financial (大写) forms appear in some court documents.
    "壹": 1, "贰": 2, "叁": 3, "肆": 4, "伍": 5, "陆": 6, "柒": 7, "捌": 8, "玖": 9,
}  # fmt: skip
_SMALL_UNITS: dict[str, int] = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_BIG_UNITS: dict[str, int] = {"亿": 100_000_000, "万": 10_000}

# ASCII and full-width Arabic digits; int() understands both.
_ARABIC = "0123456789０１２３４５６７８９"
NUMERAL_CHARS = "".join(_DIGITS) + "".join(_SMALL_UNITS) + "".join(_BIG_UNITS) + _ARABIC

# The parser accepts at most 9999亿…; 万亿 compounds never occur in statutes.
_MAX_WRITABLE = 10**12
_CANONICAL_DIGITS = "零一二三四五六七八九"
_CANONICAL_UNITS = ((1000, "千"), (100, "百"), (10, "十"))

# 第<numeral>条, optionally 之<numeral> for articles inserted by amendments.
ARTICLE_RE = re.compile(rf"第([{NUMERAL_CHARS}]+)条(?:之([{NUMERAL_CHARS}]+))?")


def chinese_to_int(s: str) -> int:
    """Parse a Chinese (or Arabic) numeral: "二百六十六" -> 266, "十三" -> 13, "266" -> 266.

    Raises ValueError for anything that is not a well-formed non-negative number.
    """
    if not isinstance(s, str):
        raise ValueError(f"not a string: {s!r}")
    text = s.strip()
    if not text:
        raise ValueError("empty numeral")
    if all(ch in _ARABIC for ch in text):
        return int(text)
    if any(ch not in _DIGITS and ch not in _SMALL_UNITS and ch not in _BIG_UNITS for ch in text):
        raise ValueError(f"not a Chinese numeral: {s!r}")
    if all(ch in _DIGITS for ch in text):
        return _positional(text, s)
    return _with_big_units(text, s)


def _positional(text: str, original: str) -> int:
    """Digit-by-digit numerals such as 二〇二〇 (years) or a single digit."""
    if len(text) > 1 and "两" in text:
        # 两 is only ever a quantity ("两百"), never a digit position.
        raise ValueError(f"not a Chinese numeral: {original!r}")
    value = 0
    for ch in text:
        value = value * 10 + _DIGITS[ch]
    return value


def _with_big_units(text: str, original: str) -> int:
    """Split on 亿 and 万 (each at most once, in that order) and parse each section."""
    total = 0
    rest = text
    seen_big = False
    for unit_char, unit in sorted(_BIG_UNITS.items(), key=lambda kv: -kv[1]):
        if rest.count(unit_char) > 1:
            raise ValueError(f"repeated {unit_char} in {original!r}")
        if unit_char in rest:
            head, rest = rest.split(unit_char)
            if not head:
                raise ValueError(f"{unit_char} without a multiplier in {original!r}")
            section = _section(head, original, after_big_unit=seen_big)
            if section == 0:
                raise ValueError(f"zero before {unit_char} in {original!r}")
            total += section * unit
            seen_big = True
    if rest:
        total += _section(rest, original, after_big_unit=seen_big)
    return total


def _section(text: str, original: str, *, after_big_unit: bool) -> int:
    """Parse a part below 10000 such as 二百零六, 十三, 一千零一, 五.

    Units must strictly decrease.  A bare trailing digit is the ones place; when it
    follows 百/千 (or a 万 section) without 零 it is colloquial shorthand ("一百五" =
    150) that we refuse rather than guess.
    """
    value = 0
    last_unit: int | None = None  # None: nothing parsed yet in this section
    pending_zero = after_big_unit and text[0] in _ZEROS
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in _ZEROS:
            if i + 1 >= len(text) or text[i + 1] in _ZEROS:
                raise ValueError(f"misplaced zero in {original!r}")
            pending_zero = True
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch in _SMALL_UNITS and i == 0 and not after_big_unit:
            # "十三": an implicit 一 before 十 at the start of a number.
            unit = _SMALL_UNITS[ch]
            if unit != 10:
                raise ValueError(f"{ch} without a multiplier in {original!r}")
            value, last_unit = 10, 10
            i += 1
            continue
        if ch not in _DIGITS:
            raise ValueError(f"unexpected {ch!r} in {original!r}")
        digit = _DIGITS[ch]
        position = _SMALL_UNITS.get(nxt, 1)
        # 零 stands for at least one skipped position: 一百零二 yes, 一百零二十 no.
        previous = last_unit if last_unit is not None else (10_000 if after_big_unit else None)
        if pending_zero and previous is not None and position * 10 >= previous:
            raise ValueError(f"misplaced zero in {original!r}")
        if nxt in _SMALL_UNITS:
            unit = _SMALL_UNITS[nxt]
            if last_unit is not None and unit >= last_unit:
                raise ValueError(f"units out of order in {original!r}")
            value += digit * unit
            last_unit = unit
            pending_zero = False
            i += 2
            continue
        if nxt:
            raise ValueError(f"unexpected {nxt!r} in {original!r}")
        # Trailing ones digit.
        ambiguous = (last_unit is not None and last_unit >= 100) or (after_big_unit and last_unit is None)
        if ambiguous and not pending_zero:
            raise ValueError(f"ambiguous shorthand numeral {original!r} (write 零 before the ones digit)")
        if ch == "两":
            raise ValueError(f"两 cannot be a ones digit in {original!r}")
        value += digit
        i += 1
    return value


def int_to_chinese(n: int) -> str:
    """Write n in canonical statute form: 266 -> "二百六十六", 13 -> "十三", 1001 -> "一千零一"."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"not a non-negative integer: {n!r}")
    if n >= _MAX_WRITABLE:
        raise ValueError(f"too large for a single 亿 section: {n}")
    if n == 0:
        return "零"
    return _to_chinese(n, leading=True)


def _to_chinese(n: int, *, leading: bool) -> str:
    for unit, char in ((100_000_000, "亿"), (10_000, "万")):
        if n >= unit:
            high, low = divmod(n, unit)
            text = _to_chinese(high, leading=leading) + char
            if low:
                # A skipped position below the big unit is spoken as 零: 一万零一十.
                text += ("零" if low < unit // 10 else "") + _to_chinese(low, leading=False)
            return text
    return _below_10k(n, leading=leading)


def _below_10k(n: int, *, leading: bool) -> str:
    parts: list[str] = []
    zero_pending = False
    started = False
    for unit, char in _CANONICAL_UNITS:
        digit, n = divmod(n, unit)
        if digit:
            if zero_pending:
                parts.append("零")
            # "十三" at the start of a number, but "一百一十三" in the middle.
            if not (unit == 10 and digit == 1 and leading and not started):
                parts.append(_CANONICAL_DIGITS[digit])
            parts.append(char)
            started = True
            zero_pending = False
        elif started:
            zero_pending = True
    if n:
        if zero_pending:
            parts.append("零")
        parts.append(_CANONICAL_DIGITS[n])
    return "".join(parts)


def parse_article_label(label: str) -> tuple[int, int]:
    """"第一百三十三条之一" -> (133, 1); "第266条" -> (266, 0).  ValueError otherwise."""
    if not isinstance(label, str):
        raise ValueError(f"not a string: {label!r}")
    match = ARTICLE_RE.fullmatch(label.strip())
    if not match:
        raise ValueError(f"not an article label: {label!r}")
    number = chinese_to_int(match.group(1))
    sub = chinese_to_int(match.group(2)) if match.group(2) else 0
    if number <= 0:
        raise ValueError(f"article number must be positive: {label!r}")
    if match.group(2) and sub <= 0:
        raise ValueError(f"之 number must be positive: {label!r}")
    return number, sub


def article_key(number: int, sub: int = 0) -> str:
    """The stable key of a provision: (133, 1) -> "133-1", (266, 0) -> "266"."""
    if isinstance(number, bool) or not isinstance(number, int) or number <= 0:
        raise ValueError(f"article number must be a positive integer: {number!r}")
    if isinstance(sub, bool) or not isinstance(sub, int) or sub < 0:
        raise ValueError(f"sub-article number must be a non-negative integer: {sub!r}")
    return f"{number}-{sub}" if sub else str(number)


def article_label(number: int, sub: int = 0) -> str:
    """The canonical written label: (133, 1) -> "第一百三十三条之一"."""
    article_key(number, sub)  # same validation
    label = f"第{int_to_chinese(number)}条"
    return f"{label}之{int_to_chinese(sub)}" if sub else label


def find_article_refs(text: str) -> list[tuple[int, int]]:
    """Every 第…条(之…) mention in order of appearance, duplicates kept.

    "依照刑法第二百六十四条、第六十七条第三款" -> [(264, 0), (67, 0)]: 款 and 项 end
    in a different character, so they never match.  Mentions whose numeral does
    not parse (e.g. "第十十条") are skipped rather than guessed.  The law being
    cited is not resolved here: "治安管理处罚法第一百零二条" is returned as well.
    """
    refs: list[tuple[int, int]] = []
    for match in ARTICLE_RE.finditer(text):
        try:
            number = chinese_to_int(match.group(1))
            sub = chinese_to_int(match.group(2)) if match.group(2) else 0
        except ValueError:
            continue
        if number <= 0 or (match.group(2) and sub <= 0):
            continue
        refs.append((number, sub))
    return refs


_RANGE_RE = re.compile(rf"{ARTICLE_RE.pattern}至{ARTICLE_RE.pattern}")


def find_article_ranges(text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every "第X条至第Y条" span, as ((X, sub), (Y, sub)) in order of appearance.

    "单位犯本节第二百一十三条至第二百一十九条之一规定之罪" -> [((213, 0), (219, 1))]: the range covers
    every article from X to Y, the sub-articles between them included (find_article_refs names the two
    ends only). Spans whose numerals do not parse, or that run backwards, are skipped.
    """
    ranges = []
    for match in _RANGE_RE.finditer(text):
        try:
            start = (chinese_to_int(match.group(1)), chinese_to_int(match.group(2)) if match.group(2) else 0)
            end = (chinese_to_int(match.group(3)), chinese_to_int(match.group(4)) if match.group(4) else 0)
        except ValueError:
            continue
        if 0 < start[0] and start <= end:
            ranges.append((start, end))
    return ranges


def in_ranges(key: tuple[int, int], ranges) -> bool:
    """(number, sub) lies in one of find_article_ranges' spans (ends included)."""
    return any(start <= key <= end for start, end in ranges)
