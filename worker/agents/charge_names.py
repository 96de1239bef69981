"""A charge's name as it stood on the offence date.

The statutes of the corpus name each charge as the Supreme People's Court and Procuratorate's charge
determinations named it between the Ninth (2015-11-01) and the Eleventh (2021-03-01) Amendment. A court
names the charge of an offence committed at another time by the name of that time: an indecent assault of
2014 is 强制猥亵、侮辱妇女罪, of 2016 强制猥亵、侮辱罪. The table below holds every change of name of a charge
that the amendments since 1997 made to conduct that stayed punishable (a charge that came or went with
the conduct is not a change of name); where one charge replaced two, the facts choose between the former
names by the words they share with each.

The offence date is the case's; where none is given, the first date the facts state that is not a
former conviction's (:func:`offence_date_of`).

A dataset's charge label (a classifier's) may be a former or a shortened name: :func:`statute_charges_of`
gives the statute charge it stands for.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from worker.agents.numerals import chinese_to_int


@dataclass(frozen=True)
class Name:
    charge: str  # as the statutes of the corpus name it
    name: str  # as it was named ...
    until: dt.date | None = None  # ... up to and including this day, or
    since: dt.date | None = None  # ... from this day


NINTH = dt.date(2015, 10, 31)  # the day before the Ninth Amendment took effect
EIGHTH = dt.date(2011, 4, 30)
SIXTH = dt.date(2006, 6, 28)
ELEVENTH = dt.date(2021, 3, 1)

NAMES = (
    Name("强制猥亵、侮辱罪", "强制猥亵、侮辱妇女罪", until=NINTH),
    Name("伪造、变造、买卖身份证件罪", "伪造、变造居民身份证罪", until=NINTH),
    Name("侵犯公民个人信息罪", "出售、非法提供公民个人信息罪", until=NINTH),
    Name("侵犯公民个人信息罪", "非法获取公民个人信息罪", until=NINTH),
    Name("非法生产、销售专用间谍器材、窃听、窃照专用器材罪", "非法生产、销售间谍专用器材罪", until=NINTH),
    Name("强迫劳动罪", "强迫职工劳动罪", until=EIGHTH),
    Name("生产、销售不符合安全标准的食品罪", "生产、销售不符合卫生标准的食品罪", until=EIGHTH),
    Name("掩饰、隐瞒犯罪所得、犯罪所得收益罪", "窝藏、转移、收购、销售赃物罪", until=SIXTH),
    Name("生产、销售假药罪", "生产、销售、提供假药罪", since=ELEVENTH),
    Name("生产、销售劣药罪", "生产、销售、提供劣药罪", since=ELEVENTH),
    Name("非法猎捕、杀害珍贵、濒危野生动物罪", "危害珍贵、濒危野生动物罪", since=ELEVENTH),
    Name("非法收购、运输、出售珍贵、濒危野生动物、珍贵、濒危野生动物制品罪", "危害珍贵、濒危野生动物罪", since=ELEVENTH),
    Name("非法采伐、毁坏国家重点保护植物罪", "危害国家重点保护植物罪", since=ELEVENTH),
    Name("非法收购、运输、加工、出售国家重点保护植物、国家重点保护植物制品罪", "危害国家重点保护植物罪", since=ELEVENTH),
)


def _applies(n: Name, day: dt.date) -> bool:
    return (n.until is not None and day <= n.until) or (n.since is not None and day >= n.since)


def name_on(charge: str, day: dt.date | None, facts: str = "") -> str:
    """The name of ``charge`` on ``day`` (itself when no change of name concerns that day, or no day is known)."""
    if day is None:
        return charge
    names = [n.name for n in NAMES if n.charge == charge and _applies(n, day)]
    if len(names) <= 1:
        return names[0] if names else charge
    return max(names, key=lambda name: (_shared(name, facts), -names.index(name)))


def charges_of_name(name: str) -> set[str]:
    """The statute charges a name stood for at some time (the name itself included)."""
    return {name} | {n.charge for n in NAMES if n.name == name}


def _shared(name: str, facts: str) -> int:
    """Character bigrams of the name (without 罪 and punctuation) that the facts contain."""
    core = re.sub(r"[、罪]", "", name)
    return sum(1 for i in range(len(core) - 1) if core[i:i + 2] in facts)


_DATE = re.compile(r"(\d{4}|[零〇一二三四五六七八九]{4})年(\d{1,2}|[一二三四五六七八九十]{1,3})月(?:(\d{1,2}|[一二三四五六七八九十]{1,3})日)?")
_FORMER = re.compile(r"曾因|曾于|判处|刑满释放|假释|缓刑|行政拘留|劳动教养|前科")
_CLAUSE = re.compile(r"[^。；;\n]+")


def _number(text: str) -> int | None:
    try:
        return int(text) if text.isdigit() else chinese_to_int(text)
    except ValueError:
        return None


def offence_date_of(facts: str) -> dt.date | None:
    """The first date the facts state outside a clause about a former conviction or penalty (a month
    without a day is read as its first day); None when there is none."""
    for clause in _CLAUSE.findall(facts or ""):
        if _FORMER.search(clause):
            continue
        for m in _DATE.finditer(clause):
            year, month = _number(m.group(1)), _number(m.group(2))
            day = _number(m.group(3)) if m.group(3) else 1
            if year is None or month is None or day is None:
                continue
            try:
                found = dt.date(year, month, day)
            except ValueError:
                continue
            if 1979 <= found.year <= 2100:
                return found
    return None


def is_subsequence(short: str, long: str) -> bool:
    """The characters of ``short`` occur in ``long`` in order (gaps allowed)."""
    it = iter(long)
    return all(ch in it for ch in short)


def statute_charges_of(label: str, statute_names: Iterable[str], aliases: Mapping[str, str | None]) -> list[str]:
    """The statute charges a dataset charge name stands for: itself, its alias, else the shortest statute
    name holding it as a character subsequence (贩卖毒品罪 → 走私、贩卖、运输、制造毒品罪)."""
    names = statute_names if isinstance(statute_names, (set, frozenset)) else set(statute_names)
    if label in names:
        return [label]
    if aliases.get(label):
        return [str(aliases[label])]
    holding = sorted((n for n in names if is_subsequence(label, n)), key=lambda n: (len(n), n))
    return holding[:1]
