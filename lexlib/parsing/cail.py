"""CAIL2018 JSON lines into precedent records.

One line of a CAIL2018 file (data_train.json, first_stage/train.json …):

    {"fact": "…", "meta": {"relevant_articles": [264], "accusation": ["盗窃"],
     "punish_of_money": 2000, "criminals": ["张某"],
     "term_of_imprisonment": {"imprisonment": 6, "life_imprisonment": false, "death_penalty": false}}}

`imprisonment` counts months of fixed-term imprisonment or 拘役 (0 for life and
death), the convention our term field shares. Accusations are normalised to the
corpus's charge names (brackets removed, 罪 added). CAIL gives no identifier:
a record's id is derived from its normalised fact, so importing the same
record from another file finds it again.
"""

from __future__ import annotations

from typing import Any

from .dedup import norm_sha256, norm_text
from .formats import MIN_FACT_CHARS, Converted, foreign_text, normalise_charge, read_json_records

_TOP_FIELDS = frozenset({"fact", "meta"})
_META_FIELDS = frozenset({"relevant_articles", "accusation", "punish_of_money", "criminals", "term_of_imprisonment"})
_TERM_FIELDS = frozenset({"imprisonment", "life_imprisonment", "death_penalty"})


def cail_convert(data: bytes, *, filename: str = "", source: str = "cail2018") -> Converted:
    """Every line of a CAIL2018 file as a case record, or the reasons it cannot be one."""
    converted = Converted(kind="case")
    data, hint = foreign_text(data)
    converted.hints += [f"{filename}: {hint}" if filename else hint] if hint else []
    rows, errors = read_json_records(data)
    converted.errors.extend(errors.errors)
    ids: set[str] = set()
    for line, raw in rows:
        problems: list[str] = []
        record = _record(raw, problems, source=source, filename=filename, line=line)
        if problems:
            for problem in problems:
                converted.refuse(line, problem)
            continue
        if record["id"] in ids:
            # The same fact twice in one file: a distinct id, so the duplicate check (not the
            # id check) finds it and merges it instead of refusing the file.
            record["id"] = f"{record['id']}-{line}"
        ids.add(record["id"])
        converted.rows.append((line, record))
    return converted


def _record(raw: Any, problems: list[str], *, source: str, filename: str, line: int) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        problems.append("record: must be a JSON object")
        return None
    problems.extend(f"{name}: unknown field (CAIL2018 records have fact and meta)" for name in sorted(set(raw) - _TOP_FIELDS))
    fact = raw.get("fact")
    if not isinstance(fact, str) or not fact.strip():
        problems.append("fact: required, a non-empty string")
        fact = ""
    elif len(norm_text(fact)) < MIN_FACT_CHARS:
        problems.append(f"fact: only {len(norm_text(fact))} characters once punctuation is removed; "
                        f"at least {MIN_FACT_CHARS} are needed for a precedent")
    meta = raw.get("meta")
    if not isinstance(meta, dict):
        problems.append("meta: required, an object")
        return None
    problems.extend(f"meta.{name}: unknown field" for name in sorted(set(meta) - _META_FIELDS))

    charges = []
    accusation = meta.get("accusation")
    if not isinstance(accusation, list) or not accusation:
        problems.append("meta.accusation: required, a non-empty list of charge names")
    else:
        for index, name in enumerate(accusation):
            if not isinstance(name, str) or not normalise_charge(name).rstrip("罪"):
                problems.append(f"meta.accusation[{index}]: must be a charge name, got {name!r}")
            else:
                charges.append(normalise_charge(name))

    articles = []
    relevant = meta.get("relevant_articles", [])
    if not isinstance(relevant, list):
        problems.append("meta.relevant_articles: must be a list of article numbers")
        relevant = []
    for index, value in enumerate(relevant):
        number = _article_number(value)
        if number is None:
            problems.append(f"meta.relevant_articles[{index}]: must be an article number, got {value!r}")
        else:
            articles.append(number)

    criminals = meta.get("criminals", [])
    if not isinstance(criminals, list) or not all(isinstance(c, str) and c.strip() for c in criminals):
        problems.append("meta.criminals: must be a list of names")
        criminals = []

    fine = meta.get("punish_of_money")
    if fine is not None:
        if isinstance(fine, bool) or not isinstance(fine, (int, float)) or fine < 0 or fine != int(fine):
            problems.append(f"meta.punish_of_money: must be a whole number of yuan, got {fine!r}")
            fine = None
        else:
            fine = int(fine)

    term = _term(meta.get("term_of_imprisonment"), problems)
    if problems:
        return None
    return {
        "id": f"{source}-{norm_sha256(fact)[:16]}", "source": source, "fact": fact,
        "defendants": [c.strip() for c in criminals], "charges": list(dict.fromkeys(charges)),
        "articles": list(dict.fromkeys(articles)), "term": term, "label_source": "gold",
        "origin": {"format": "cail2018", "file": filename, "line": line}, "fine": fine,
    }


def _article_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value > 0 else None


def _term(raw: Any, problems: list[str]) -> dict[str, Any] | None:
    if raw is None:
        return None  # not labelled
    if not isinstance(raw, dict):
        problems.append("meta.term_of_imprisonment: must be an object")
        return None
    problems.extend(f"meta.term_of_imprisonment.{name}: unknown field" for name in sorted(set(raw) - _TERM_FIELDS))
    months = raw.get("imprisonment", 0)
    life, death = raw.get("life_imprisonment", False), raw.get("death_penalty", False)
    if isinstance(months, bool) or not isinstance(months, int) or months < 0:
        problems.append(f"meta.term_of_imprisonment.imprisonment: must be a number of months (0 or more), got {months!r}")
    for name, value in (("life_imprisonment", life), ("death_penalty", death)):
        if not isinstance(value, bool):
            problems.append(f"meta.term_of_imprisonment.{name}: must be true or false, got {value!r}")
    if life is True and death is True:
        problems.append("meta.term_of_imprisonment: life_imprisonment and death_penalty cannot both be true")
    return {"months": months, "life": life, "death": death}
