"""Criminal judgments (刑事判决书) into precedent records, with the outcome read from 判决如下.

What is read, and from where:

* the outcome, per defendant, from the last 判决如下 section (an appellate
  judgment restates the sentence it imposes there): the charges (犯…罪), the
  term (有期徒刑X年X个月, 拘役, 管制, 无期徒刑, 死刑, 死刑缓期二年执行,
  免予刑事处罚, 单处罚金), the suspension (缓刑) and the fine (罚金); with
  several charges the combined sentence after 决定执行 is the term;
* the facts from 经审理查明 (else the prosecution's 指控) up to 本院认为;
* the Criminal Law articles cited after 《中华人民共和国刑法》 in 本院认为;
* the case number (（2018）鄂0112刑初298号) and the court (its level).

Numbers may be Chinese or Arabic numerals. Anything the parser cannot read
with confidence (several defendants sentenced in one clause with 分别, an
acquittal, a verdict that only upholds another judgment, an unreadable term)
refuses the document with the reason: an admin checks every parsed outcome
before it is published, and a wrong term is worse than a missing precedent.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from worker.agents.numerals import ARTICLE_RE, NUMERAL_CHARS, chinese_to_int

from .dedup import norm_text
from .formats import MIN_FACT_CHARS, Converted, normalise_charge

SOURCE = "court_judgment"
_N = f"[{NUMERAL_CHARS}]+"
_DURATION = rf"(?:({_N})年)?零?(?:({_N})个?月)?(?:({_N})[日天])?"
_CASE_NUMBER_RE = re.compile(r"[（(〔［\[]\s*(\d{4})\s*[）)〕］\]]\s*([^\s，,。；;：:（(]{1,30}?号)")
_COURT_RE = re.compile(r"[^\s，,。；;：:]{2,40}?人民法院")
_VERDICT_END = ("如不服本判决", "本判决为终审判决", "审判长", "审 判 长", "审　判　长", "代理审判员", "审判员", "人民陪审员")
_FACT_STARTS = ("经审理查明", "公诉机关指控", "检察院指控", "指控：", "指控:", "指控，")
_DEFENDANT_RE = re.compile(r"被告(人|单位)([^\s，,。；;：:（(犯]{1,40})(?:[（(][^）)]{0,40}[）)])?(犯|无罪)")
_CHARGE_RE = re.compile(r"犯([^，,。；;：:\s]{1,60}?罪)(?=[，,。；;、：:\s]|$)")
_MORE_CHARGE_RE = re.compile(r"、([^，,。；;：:\s]{1,60}?罪)(?=[，,。；;、：:\s]|$)")
_PAREN_RE = re.compile(r"[（(][^（）()]*[）)]")
_FINE_RE = re.compile(r"罚金(?:人民币)?([0-9０-９.．,，]+|[零〇一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟]+)(万)?元")
_SENTENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("死刑缓期二年执行", re.compile(r"死刑[，,、]?缓期[二两2]年执行")),
    ("死刑", re.compile(r"死刑(?![，,、]?缓期)")),
    ("无期徒刑", re.compile(r"无期徒刑")),
    ("有期徒刑", re.compile(rf"有期徒刑{_DURATION}")),
    ("拘役", re.compile(rf"拘役{_DURATION}")),
    ("管制", re.compile(rf"管制{_DURATION}")),
    ("免予刑事处罚", re.compile(r"免[予于除]刑事处罚")),
)
_NEXT_ITEM_RE = re.compile(r"(?<=[；;。\n])\s*[一二三四五六七八九十]+[、.．]")
_SUSPENSION_RE = re.compile(rf"(?<!缓期)缓刑{_DURATION}")


class JudgmentError(ValueError):
    """The document cannot be read as a judgment; the message says why."""


@dataclass
class DefendantOutcome:
    name: str
    charges: list[str]
    kind: str
    months: int
    life: bool = False
    death: bool = False
    suspended: bool = False
    fine: int | None = None
    clause: str = ""  # the verdict text it was read from, for the admin to compare
    notes: list[str] = field(default_factory=list)

    def term(self) -> dict[str, Any]:
        return {"months": self.months, "life": self.life, "death": self.death, "kind": self.kind,
                "suspended": self.suspended}

    def display(self) -> dict[str, Any]:
        return {"name": self.name, "charges": self.charges, "kind": self.kind, "months": self.months,
                "life": self.life, "death": self.death, "suspended": self.suspended, "fine": self.fine,
                "clause": self.clause, "notes": self.notes}


@dataclass
class Judgment:
    outcomes: list[DefendantOutcome]
    fact: str
    articles: list[int]
    case_number: str = ""
    court: str = ""
    court_level: str = ""


def looks_like_judgment(text: str) -> bool:
    return "判决如下" in text or "刑事判决书" in text


def parse_judgment(text: str) -> Judgment:
    """A judgment's outcome, facts and cited articles; JudgmentError when it cannot be read."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    verdict_at = text.rfind("判决如下")
    if verdict_at < 0:
        raise JudgmentError("no 判决如下 section: is this a judgment (判决书)? Rulings (裁定书) carry no sentence")
    reasoning_at = text.rfind("本院认为", 0, verdict_at)
    outcomes = parse_verdict(_verdict_section(text, verdict_at))
    fact = _fact(text, reasoning_at if reasoning_at >= 0 else verdict_at)
    articles = criminal_law_articles(text[reasoning_at if reasoning_at >= 0 else 0:verdict_at])
    head = text[:600]
    case_number = _case_number(head)
    court_match = _COURT_RE.search(head)
    court = court_match.group() if court_match else ""
    return Judgment(outcomes, fact, articles, case_number, court, court_level(court))


def _verdict_section(text: str, verdict_at: int) -> str:
    section = text[verdict_at + len("判决如下"):]
    ends = [section.find(marker) for marker in _VERDICT_END if section.find(marker) > 0]
    return section[:min(ends)] if ends else section


def _fact(text: str, end: int) -> str:
    for marker in _FACT_STARTS:
        start = text.find(marker, 0, end)
        if start >= 0:
            fact = re.sub(r"\s+", "", text[start:end]).strip()
            if len(norm_text(fact)) >= MIN_FACT_CHARS:
                return fact
    raise JudgmentError("no facts found: expected 经审理查明 or the prosecution's 指控 before 本院认为")


def _case_number(head: str) -> str:
    match = _CASE_NUMBER_RE.search(head)
    return f"({match.group(1)}){match.group(2)}" if match else ""


def court_level(court: str) -> str:
    if not court:
        return ""
    if court.startswith("最高人民法院"):
        return "supreme"
    if "高级人民法院" in court:
        return "high"
    if "中级人民法院" in court:
        return "intermediate"
    return "basic"


def criminal_law_articles(reasoning: str) -> list[int]:
    """Article numbers cited from the Criminal Law (《中华人民共和国刑法》 or 《刑法》) in the reasoning.

    Each citation runs from the title to the next 《 (another law) or 规定; 款 and 项 are not
    articles and are skipped by ARTICLE_RE. Sub-articles (之一) count as their article number,
    as the case schema has it.
    """
    numbers: list[int] = []
    for match in re.finditer(r"《(?:中华人民共和国)?刑法》", reasoning):
        rest = reasoning[match.end():]
        stop = min([i for i in (rest.find("《"), rest.find("规定")) if i >= 0], default=len(rest))
        for ref in ARTICLE_RE.finditer(rest[:stop]):
            try:
                number = chinese_to_int(ref.group(1))
            except ValueError:
                continue
            if number > 0:
                numbers.append(number)
    return list(dict.fromkeys(numbers))


# --- the verdict -------------------------------------------------------------------------


def parse_verdict(section: str) -> list[DefendantOutcome]:
    """Per defendant: charges, term, suspension and fine, from the text after 判决如下."""
    section = re.sub(r"[ \t\u3000]+", "", section)
    matches = list(_DEFENDANT_RE.finditer(section))
    convictions = [m for m in matches if m.group(3) == "犯"]
    acquitted = [m.group(2) for m in matches if m.group(3) == "无罪"]
    if acquitted:
        raise JudgmentError(f"the verdict acquits {'、'.join(acquitted)} (无罪): acquittals are not imported as precedents")
    if not convictions:
        if "维持原判" in section or "驳回上诉" in section or "驳回抗诉" in section:
            raise JudgmentError("the verdict only upholds an earlier judgment (维持原判): import the first-instance judgment")
        raise JudgmentError("no defendant convicted in the 判决如下 section (expected 被告人…犯…罪)")
    outcomes: list[DefendantOutcome] = []
    seen: set[str] = set()
    for index, match in enumerate(convictions):
        end = convictions[index + 1].start() if index + 1 < len(convictions) else len(section)
        clause = section[match.start():end]
        # The next numbered item (二、 三、扣押在案的…) is about something else.
        next_item = _NEXT_ITEM_RE.search(clause)
        if next_item:
            clause = clause[:next_item.start()]
        names = [n for n in match.group(2).split("、") if n]
        if len(names) > 1 and "分别" in clause:
            raise JudgmentError(f"several defendants ({'、'.join(names)}) are sentenced in one clause with 分别: "
                                f"the parser does not guess who got which term")
        for name in names:
            if name in seen:
                raise JudgmentError(f"{name} is sentenced twice in the 判决如下 section")
            seen.add(name)
            outcomes.append(_outcome(name, clause, unit=match.group(1) == "单位"))
    return outcomes


def _outcome(name: str, clause: str, *, unit: bool) -> DefendantOutcome:
    shown = _shown_clause(clause)
    plain = _without_parentheses(clause)
    charges = _charges(plain)
    if not charges:
        raise JudgmentError(f"cannot read the charge of {name} in {shown!r}")
    combined = plain.rfind("决定执行")
    sentence_text = plain[combined:] if combined >= 0 else plain
    found = [(kind, m) for kind, pattern in _SENTENCES for m in pattern.finditer(sentence_text)]
    found = [(kind, m) for kind, m in found if kind not in ("有期徒刑", "拘役", "管制") or any(m.groups())]
    fines = [_amount(m, name, shown) for m in _FINE_RE.finditer(sentence_text)]
    notes: list[str] = []
    if "没收个人" in plain:
        notes.append("没收个人财产 (confiscation) is not a fine and is not recorded as one")
    if not found:
        if fines or "单处罚金" in sentence_text or unit:
            if not fines:
                raise JudgmentError(f"cannot read the fine of {name} in {shown!r}")
            return DefendantOutcome(name, charges, "单处罚金", 0, fine=fines[0], clause=shown, notes=notes)
        raise JudgmentError(f"cannot read the term of {name} in {shown!r}")
    if combined < 0 and len(found) > 1:
        raise JudgmentError(f"{name} has several sentences and no combined one (决定执行) in {shown!r}")
    kind, match = found[0]
    outcome = DefendantOutcome(name, charges, kind, 0, clause=shown, notes=notes)
    if kind in ("有期徒刑", "拘役", "管制"):
        outcome.months = _months(match, name, shown, notes)
    outcome.life = kind == "无期徒刑"
    outcome.death = kind in ("死刑", "死刑缓期二年执行")
    suspension = _SUSPENSION_RE.search(sentence_text)
    outcome.suspended = bool(suspension and any(suspension.groups()))
    if fines:
        # With 决定执行 the combined fine is the first after it; without, the fines of one charge.
        outcome.fine = fines[0] if combined >= 0 else sum(fines)
    return outcome


def _without_parentheses(text: str) -> str:
    """Drop parenthesised remarks (刑期从…起计算, 已缴纳 …), innermost first: they restate dates, not terms."""
    while (stripped := _PAREN_RE.sub("", text)) != text:
        text = stripped
    return text


def _shown_clause(clause: str) -> str:
    clause = clause.strip("；;，, \n")
    return clause if len(clause) <= 300 else clause[:300] + "…"


def _charges(clause: str) -> list[str]:
    charges: list[str] = []
    for match in _CHARGE_RE.finditer(clause):
        charges.append(match.group(1))
        rest = clause[match.end():]
        while (more := _MORE_CHARGE_RE.match(rest)) is not None:
            charges.append(more.group(1))
            rest = rest[more.end():]
    return list(dict.fromkeys(normalise_charge(c) for c in charges))


def _number(text: str) -> int:
    # 两 is a quantity before a unit ("两年", "两万") that chinese_to_int refuses as a digit.
    text = re.sub(r"两(?=[十百千万亿拾佰仟])", "二", text)
    return 2 if text == "两" else chinese_to_int(text)


def _months(match: re.Match[str], name: str, shown: str, notes: list[str]) -> int:
    years, months, days = match.groups()
    try:
        total = (_number(years) * 12 if years else 0) + (_number(months) if months else 0)
        if days:
            day_count = _number(days)
            rounded = max(1, round(day_count / 30))
            notes.append(f"{day_count} days counted as {rounded} month(s)")
            total += rounded
    except ValueError:
        raise JudgmentError(f"cannot read the length of the term of {name} in {shown!r}") from None
    return total


def _amount(match: re.Match[str], name: str, shown: str) -> int:
    digits, wan = match.group(1), match.group(2)
    try:
        if re.fullmatch(r"[0-9０-９.．,，]+", digits):
            value = float(digits.translate(str.maketrans("０１２３４５６７８９．", "0123456789.", ",，")))
        else:
            value = float(_number(digits))
    except ValueError:
        raise JudgmentError(f"cannot read the fine of {name} in {shown!r}") from None
    return int(round(value * (10_000 if wan else 1)))


# --- documents into records -----------------------------------------------------------------


def judgment_record(text: str, *, filename: str, sha256: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the case record, what the admin confirms) of one judgment; JudgmentError when it cannot be read."""
    judgment = parse_judgment(text)
    outcomes = judgment.outcomes
    charges = list(dict.fromkeys(c for o in outcomes for c in o.charges))
    ext_id = f"judgment-{judgment.case_number}" if judgment.case_number else f"judgment-{sha256[:16]}"
    record: dict[str, Any] = {
        "id": ext_id[:120], "source": SOURCE, "fact": judgment.fact, "defendants": [o.name for o in outcomes],
        "charges": charges, "articles": judgment.articles, "term": outcomes[0].term() if len(outcomes) == 1 else None,
        "label_source": "parsed_judgment",
        "origin": {"format": "judgment", "file": filename, "sha256": sha256, "case_number": judgment.case_number,
                   "court": judgment.court, "fines": {o.name: o.fine for o in outcomes if o.fine is not None}},
        "fine": outcomes[0].fine if len(outcomes) == 1 else None,
    }
    if len(outcomes) > 1:
        record["per_defendant"] = [{"name": o.name, "charges": o.charges, "term": o.term()} for o in outcomes]
    if judgment.court_level:
        record["court_level"] = judgment.court_level
    note = {"file": filename, "case_number": judgment.case_number, "court": judgment.court,
            "articles": judgment.articles, "fact": judgment.fact[:400], "outcomes": [o.display() for o in outcomes]}
    return record, note


def judgment_convert(documents: list[tuple[str, str]]) -> Converted:
    """(file name, extracted text) of each judgment document; line n is the n-th document."""
    converted = Converted(kind="case")
    for line, (filename, text) in enumerate(documents, 1):
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        try:
            record, note = judgment_record(text, filename=filename, sha256=sha)
        except JudgmentError as exc:
            converted.refuse(line, f"{filename}: {exc}")
            continue
        converted.rows.append((line, record))
        converted.notes[line] = note
    return converted
