"""LeCaRD and LeCaRDv2 queries and candidate documents into precedent records.

The four record shapes (one JSON object each; query files are JSON lines,
candidate files hold one object, often spread over several lines):

* LeCaRD query: ``{"path", "ridx", "q", "crime": [...]}``: the charges are given.
* LeCaRD candidate: ``{"ajId", "ajName", "ajjbqk", "pjjg", "qw", "writId", "writName"}``:
  the facts are ``ajjbqk``; the charges, terms and fines come from the document
  itself, its verdict ``pjjg`` (or the 判决如下 section of the full text ``qw``),
  read by the judgment parser. ``ajName`` is the cause of action, not the verdict.
* LeCaRDv2 query: ``{"id", "query", "fact"?}``: ``query`` starts with the document
  title (张某盗窃罪一审刑事判决书…); the charges are the known charge names at the
  end of the title (label_source "title": a cause of action, not a verdict).
* LeCaRDv2 candidate: ``{"pid", "qw", "fact", "reason", "charge", "article"}``:
  charges and articles are given; the term comes from the 判决如下 section of ``qw``
  when it has one.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from .dedup import norm_text
from .formats import MIN_FACT_CHARS, Converted, foreign_text, normalise_charge, read_json_records
from .judgment import JudgmentError, parse_verdict

_TITLE_RE = re.compile(r"^(.{2,120}?)(?:一审|二审|再审)?刑事(?:附带民事)?(?:判决书|裁定书)")


def lecard_convert(data: bytes, *, filename: str = "", known_charges: Collection[str] = (), line_offset: int = 0) -> Converted:
    """Every record of a LeCaRD / LeCaRDv2 file; ``known_charges`` are the charge names a
    LeCaRDv2 title is matched against. ``line_offset`` numbers the records of a folder on."""
    converted = Converted(kind="case")
    data, hint = foreign_text(data)
    converted.hints += [f"{filename}: {hint}" if filename else hint] if hint else []
    rows, errors = read_json_records(data)
    converted.errors.extend(type(e)(e.line + line_offset, f"{filename}: {e.reason}" if filename else e.reason)
                            for e in errors.errors)
    charges_by_length = sorted({c for c in known_charges if c.endswith("罪")}, key=len, reverse=True)
    for line, raw in rows:
        where = line + line_offset
        try:
            record, note = lecard_record(raw, filename=filename, line=line, charges_by_length=charges_by_length)
        except ValueError as exc:
            converted.refuse(where, f"{filename}: {exc}" if filename else str(exc))
            continue
        converted.rows.append((where, record))
        if note:
            converted.notes[where] = note
    return converted


def lecard_record(raw: Any, *, filename: str, line: int, charges_by_length: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    if not isinstance(raw, dict):
        raise ValueError("a record must be a JSON object")
    origin = {"format": "lecard", "file": filename, "line": line}
    if {"ridx", "q"} <= set(raw):
        ridx = _identifier(raw, "ridx")
        charges = _given_charges(raw.get("crime"), "crime")
        return _case(f"lecard-q-{ridx}", "lecard", _text(raw, "q"), charges, [], None, "gold", origin), {}
    if "ajjbqk" in raw:
        writ = _identifier(raw, "writId")
        fact = _text(raw, "ajjbqk")
        outcomes = _verdict(raw.get("pjjg"), raw.get("qw"))
        return _from_outcomes(f"lecard-{writ}", "lecard", fact, outcomes, [], origin)
    if {"pid", "qw"} <= set(raw):
        pid = _identifier(raw, "pid")
        fact = _text(raw, "fact") if raw.get("fact") else _text(raw, "qw")
        charges = _given_charges(raw.get("charge"), "charge")
        articles = _given_articles(raw.get("article"))
        try:
            outcomes = _verdict(None, raw.get("qw"))
        except ValueError:
            outcomes = []  # the charges and articles are given; a term is a bonus
        if outcomes and {c for o in outcomes for c in o.charges} <= set(charges):
            return _from_outcomes(f"lecardv2-{pid}", "lecardv2", fact, outcomes, articles, origin)
        return _case(f"lecardv2-{pid}", "lecardv2", fact, charges, articles, None, "gold", origin), {}
    if {"id", "query"} <= set(raw):
        qid = _identifier(raw, "id")
        query = _text(raw, "query")
        defendants, charges = title_charges(query, charges_by_length)
        fact = _text(raw, "fact") if raw.get("fact") else query
        record = _case(f"lecardv2-q-{qid}", "lecardv2", fact, charges, [], None, "title", origin)
        record["defendants"] = defendants
        return record, {}
    raise ValueError("not a LeCaRD record: expected ridx+q (query), ajjbqk (candidate), id+query (LeCaRDv2 query) "
                     "or pid+qw (LeCaRDv2 candidate)")


def title_charges(query: str, charges_by_length: list[str]) -> tuple[list[str], list[str]]:
    """Defendants and charges from a title such as 张某、李某盗窃、诈骗一审刑事判决书."""
    match = _TITLE_RE.match(query.strip())
    if not match:
        raise ValueError("the query does not start with a judgment title (…刑事判决书)")
    title = re.sub(r"(一案|案)$", "", match.group(1))
    charges: list[str] = []
    rest = title
    while rest:
        found = next((c for c in charges_by_length if rest.endswith(c) or rest.endswith(c[:-1])), None)
        if found is None:
            break
        charges.insert(0, found)
        rest = rest[: -len(found) if rest.endswith(found) else -(len(found) - 1)].rstrip("、")
    if not charges:
        raise ValueError(f"no known charge at the end of the title {title!r}")
    defendants = [name for name in rest.split("、") if name]
    return defendants, charges


def _verdict(pjjg: Any, qw: Any):
    if isinstance(pjjg, str) and pjjg.strip():
        try:
            return parse_verdict(pjjg)
        except JudgmentError as exc:
            if not (isinstance(qw, str) and "判决如下" in qw):
                raise ValueError(f"pjjg: {exc}") from None
    if isinstance(qw, str) and "判决如下" in qw:
        section = qw[qw.rfind("判决如下") + len("判决如下"):]
        try:
            return parse_verdict(section)
        except JudgmentError as exc:
            raise ValueError(f"qw: {exc}") from None
    raise ValueError("no verdict: neither pjjg nor a 判决如下 section in qw")


def _from_outcomes(ext_id, source, fact, outcomes, articles, origin):
    charges = list(dict.fromkeys(c for o in outcomes for c in o.charges))
    record = _case(ext_id, source, fact, charges, articles, outcomes[0].term() if len(outcomes) == 1 else None,
                   "parsed_judgment", origin)
    record["defendants"] = [o.name for o in outcomes]
    record["fine"] = outcomes[0].fine if len(outcomes) == 1 else None
    if len(outcomes) > 1:
        record["per_defendant"] = [{"name": o.name, "charges": o.charges, "term": o.term()} for o in outcomes]
    return record, {"outcomes": [o.display() for o in outcomes]}


def _case(ext_id, source, fact, charges, articles, term, label_source, origin) -> dict[str, Any]:
    if len(norm_text(fact)) < MIN_FACT_CHARS:
        raise ValueError(f"the facts have only {len(norm_text(fact))} characters once punctuation is removed; "
                         f"at least {MIN_FACT_CHARS} are needed for a precedent")
    if not charges:
        raise ValueError("no charge: the record gives none and none could be read")
    return {"id": ext_id[:120], "source": source, "fact": fact.strip(), "defendants": [], "charges": charges,
            "articles": articles, "term": term, "label_source": label_source, "origin": origin}


def _identifier(raw: dict, name: str) -> str:
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise ValueError(f"{name}: required, a string or number identifying the record")
    return str(value).strip()


def _text(raw: dict, name: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name}: required, a non-empty string")
    return value


def _given_charges(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) and c.strip() for c in value):
        raise ValueError(f"{name}: must be a list of charge names")
    return list(dict.fromkeys(normalise_charge(c) for c in value))


def _given_articles(value: Any) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("article: must be a list of article numbers")
    numbers = []
    for item in value:
        if isinstance(item, str) and item.strip().isdigit():
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int) or item <= 0:
            raise ValueError(f"article: {item!r} is not an article number")
        numbers.append(item)
    return list(dict.fromkeys(numbers))

