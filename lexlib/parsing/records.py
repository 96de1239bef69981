"""Validate raw JSONL objects into typed, immutable corpus records.

The schemas follow shared/data/README.md (statutes, interpretations, checklists,
cases).  Validation is strict because these rows become the evidence the agents
cite: an unknown field is more likely a typo ("valid_form") than a new feature,
and a wrong type would otherwise surface as a crash deep inside an import.

Every problem is reported as "<field>: <what is wrong>" on the row's line, and a
file is only accepted when every row is valid. What counts as which JSON type is
worker/agents/strictjson.py's (the stage schemas' validator uses the same).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from worker.agents.numerals import article_key, article_label, parse_article_label
from worker.agents.strictjson import has_json_type, json_type

from .errors import MAX_REPORTED_ERRORS, ErrorCollector

DEFAULT_LAW = "中华人民共和国刑法"
MAX_TERM_MONTHS = 600
TERM_KINDS = frozenset(
    {"有期徒刑", "拘役", "管制", "无期徒刑", "死刑", "死刑缓期二年执行", "免予刑事处罚", "单处罚金"}
)
# "illustrative": the demo corpus shipped with Lextrace (fictional cases).
LABEL_SOURCES = frozenset({"gold", "benchmark_answers", "mcq_answers", "parsed_judgment", "title", "illustrative"})
KINDS = ("statute", "interpretation", "checklist", "case")

_ISO_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


# --- records ----------------------------------------------------------------------


@dataclass(frozen=True)
class StatuteRecord:
    number: int
    sub: int
    key: str
    label: str
    text: str
    law: str = DEFAULT_LAW
    part: str | None = None
    chapter: str | None = None
    section: str | None = None
    charges: tuple[str, ...] = ()
    topic: str | None = None
    repealed: bool = False
    valid_from: date | None = None
    valid_to: date | None = None  # inclusive; None = still in force
    amendment: bool = False  # the upload explicitly amends an existing article
    gloss_en: str | None = None
    text_source: str | None = None


@dataclass(frozen=True)
class InterpretationRecord:
    id: str
    source: str
    text: str
    para: str | None = None
    articles: tuple[int, ...] = ()
    law: str | None = None
    gloss_en: str | None = None


@dataclass(frozen=True)
class RelatedParagraph:
    source: str
    text: str
    interpretation_id: str | None = None


@dataclass(frozen=True)
class ChecklistRecord:
    article: int
    sub: int
    key: str
    label: str
    items: tuple[str, ...]
    items_alt: tuple[str, ...] = ()  # empty when the source has only one version
    charges: tuple[str, ...] = ()
    related: tuple[RelatedParagraph, ...] = ()
    items_source: str | None = None
    items_alt_source: str | None = None
    charges_source: str | None = None
    gloss_en: tuple[str, ...] = ()  # English glosses of `items`, in order


@dataclass(frozen=True)
class Term:
    months: int  # fixed-term imprisonment / 拘役 in months, 0 when none (CAIL convention)
    life: bool
    death: bool
    kind: str | None = None
    suspended: bool | None = None


@dataclass(frozen=True)
class DefendantLabel:
    name: str
    charges: tuple[str, ...]
    term: Term | None


@dataclass(frozen=True)
class DuplicateRef:
    id: str
    source: str
    near: bool = False


@dataclass(frozen=True)
class CaseRecord:
    id: str
    source: str
    fact: str
    defendants: tuple[str, ...]
    charges: tuple[str, ...]
    articles: tuple[int, ...]
    term: Term | None
    label_source: str
    # Provenance is free-form JSON; excluded from hashing because dicts are unhashable.
    origin: dict[str, Any] = field(default_factory=dict, hash=False)
    fine: int | None = None
    per_defendant: tuple[DefendantLabel, ...] = ()
    court_level: str | None = None
    gloss_en: str | None = None
    duplicates: tuple[DuplicateRef, ...] = ()
    penalty_bucket: str | None = None


CorpusRecord = StatuteRecord | InterpretationRecord | ChecklistRecord | CaseRecord


# --- field reading -------------------------------------------------------------------


class _Fields:
    """Reads typed fields from one JSON object, collecting problems instead of raising."""

    def __init__(self, raw: Any, allowed: Iterable[str], problems: list[str], prefix: str = "") -> None:
        self.valid = has_json_type(raw, "object")
        self.raw: dict[str, Any] = raw if self.valid else {}
        self.problems = problems
        self.prefix = prefix
        # When the value is not an object its fields are not reported one by one.
        if not self.valid:
            self.fail("", f"must be an object, got {_type_name(raw)}")
            return
        for name in sorted(set(raw) - set(allowed)):
            self.problems.append(f"{prefix}{name}: unknown field")

    def fail(self, name: str, message: str) -> None:
        label = f"{self.prefix}{name}" if name else self.prefix.rstrip(".") or "record"
        self.problems.append(f"{label}: {message}")

    def _get(self, name: str, required: bool) -> tuple[bool, Any]:
        """(present and not null, value); reports a missing required field."""
        if name not in self.raw:
            if required:
                self.fail(name, "required field is missing")
            return False, None
        value = self.raw[name]
        if value is None:
            if required:
                self.fail(name, "must not be null")
            return False, None
        return True, value

    def _typed(self, name: str, value: Any, kind: str, wanted: str) -> bool:
        """``value`` is of the JSON type ``kind``; else the problem "must be <wanted>, got <its type>"."""
        if has_json_type(value, kind):
            return True
        self.fail(name, f"must be {wanted}, got {_type_name(value)}")
        return False

    def string(self, name: str, *, required: bool = True, default: str | None = None) -> str | None:
        present, value = self._get(name, required)
        if not present:
            return default
        if not self._typed(name, value, "string", "a string"):
            return default
        if not value.strip():
            self.fail(name, "must not be empty")
            return default
        return value

    def integer(self, name: str, *, required: bool = True, minimum: int | None = None,
                maximum: int | None = None, default: int | None = None) -> int | None:  # fmt: skip
        present, value = self._get(name, required)
        if not present:
            return default
        return self._check_int(name, value, minimum, maximum, default)

    def _check_int(self, name: str, value: Any, minimum: int | None, maximum: int | None, default: Any) -> Any:
        # true/false and 1.0 are never an integer here (strictjson's types).
        if not self._typed(name, value, "integer", "an integer"):
            return default
        if minimum is not None and value < minimum:
            self.fail(name, f"must be at least {minimum}, got {value}")
            return default
        if maximum is not None and value > maximum:
            self.fail(name, f"must be at most {maximum}, got {value}")
            return default
        return value

    def boolean(self, name: str, *, required: bool = False, default: bool | None = False) -> bool | None:
        present, value = self._get(name, required)
        if not present:
            return default
        if not self._typed(name, value, "boolean", "true or false"):
            return default
        return value

    def string_list(self, name: str, *, required: bool = True, non_empty: bool = False,
                    suffix: str | None = None) -> tuple[str, ...]:  # fmt: skip
        items = self._list(name, required)
        result: list[str] = []
        for index, item in enumerate(items):
            if not has_json_type(item, "string") or not item.strip():
                self.fail(f"{name}[{index}]", f"must be a non-empty string, got {_type_name(item)}")
            elif suffix and not item.endswith(suffix):
                self.fail(f"{name}[{index}]", f"must end in {suffix}, got {item!r}")
            else:
                result.append(item)
        if non_empty and name in self.raw and has_json_type(self.raw[name], "array") and not items:
            self.fail(name, "must not be empty")
        return tuple(result)

    def int_list(self, name: str, *, required: bool = True, minimum: int = 1) -> tuple[int, ...]:
        items = self._list(name, required)
        result = [self._check_int(f"{name}[{i}]", item, minimum, None, None) for i, item in enumerate(items)]
        return tuple(value for value in result if value is not None)

    def object_list(self, name: str) -> list[Any]:
        return self._list(name, required=False)

    def _list(self, name: str, required: bool) -> list[Any]:
        present, value = self._get(name, required)
        if not present:
            return []
        if not self._typed(name, value, "array", "a list"):
            return []
        return value

    def iso_date(self, name: str) -> date | None:
        present, value = self._get(name, required=False)
        if not present:
            return None
        # date.fromisoformat also takes "20200101" and week dates; we want one spelling.
        if not has_json_type(value, "string") or not _ISO_DATE_RE.fullmatch(value):
            self.fail(name, f"must be a date written YYYY-MM-DD, got {value!r}")
            return None
        try:
            return date.fromisoformat(value)
        except ValueError:
            self.fail(name, f"is not a real date: {value!r}")
            return None

    def mapping(self, name: str, *, required: bool = True) -> dict[str, Any]:
        present, value = self._get(name, required)
        if not present:
            return {}
        if not self._typed(name, value, "object", "an object"):
            return {}
        return value


# A JSON type (strictjson.json_type) as the problems name it.
_ARTICLED = {"null": "null", "boolean": "a boolean", "integer": "an integer", "number": "a number", "string": "a string",
             "array": "a list", "object": "an object"}


def _type_name(value: Any) -> str:
    kind = json_type(value)
    return _ARTICLED.get(kind, kind)


def _article_identity(f: _Fields, number_field: str) -> tuple[int | None, int | None, str | None, str | None]:
    """number, sub, key, label: key and label are optional but must agree with number and sub."""
    number = f.integer(number_field, minimum=1)
    sub = f.integer("sub", required=False, minimum=0, default=0)
    key = f.string("key", required=False)
    label = f.string("label", required=False)
    if number is None or sub is None:
        return None, None, None, None
    expected_key = article_key(number, sub)
    if key is not None and key != expected_key:
        f.fail("key", f"{key!r} does not match {number_field} {number} and sub {sub} (expected {expected_key!r})")
    if label is not None:
        try:
            parsed = parse_article_label(label)
        except ValueError:
            f.fail("label", f"{label!r} is not an article label such as 第二百六十六条")
        else:
            if parsed != (number, sub):
                f.fail("label", f"{label!r} does not match {number_field} {number} and sub {sub}")
    return number, sub, expected_key, label or article_label(number, sub)


# --- per-kind validators -----------------------------------------------------------------

_STATUTE_FIELDS = frozenset(
    {"law", "number", "sub", "key", "label", "text", "part", "chapter", "section", "charges", "topic",
     "repealed", "valid_from", "valid_to", "amendment", "gloss_en", "text_source"}
)  # fmt: skip
_INTERPRETATION_FIELDS = frozenset({"id", "source", "para", "text", "articles", "law", "gloss_en"})
_CHECKLIST_FIELDS = frozenset(
    {"article", "sub", "key", "label", "items", "items_source", "items_alt", "items_alt_source", "charges",
     "charges_source", "related", "gloss_en"}
)  # fmt: skip
_RELATED_FIELDS = frozenset({"source", "text", "interpretation_id"})
_CASE_FIELDS = frozenset(
    {"id", "source", "fact", "defendants", "charges", "articles", "term", "label_source", "origin", "fine",
     "per_defendant", "court_level", "gloss_en", "duplicates", "penalty_bucket"}
)  # fmt: skip
_TERM_FIELDS = frozenset({"months", "life", "death", "kind", "suspended"})
_DEFENDANT_FIELDS = frozenset({"name", "charges", "term"})
_DUPLICATE_FIELDS = frozenset({"id", "source", "near"})


def _statute(raw: Any, problems: list[str], known_laws: Collection[str] | None) -> StatuteRecord | None:
    f = _Fields(raw, _STATUTE_FIELDS, problems)
    law = f.string("law", required=False, default=DEFAULT_LAW)
    if known_laws is not None and law not in known_laws:
        f.fail("law", f"unknown law {law!r}")
    number, sub, key, label = _article_identity(f, "number")
    text = f.string("text")
    valid_from, valid_to = f.iso_date("valid_from"), f.iso_date("valid_to")
    if valid_from and valid_to and valid_to < valid_from:
        f.fail("valid_to", f"{valid_to.isoformat()} is before valid_from {valid_from.isoformat()}")
    record = dict(
        law=law, number=number, sub=sub, key=key, label=label, text=text,
        part=f.string("part", required=False), chapter=f.string("chapter", required=False),
        section=f.string("section", required=False), charges=f.string_list("charges", required=False, suffix="罪"),
        topic=f.string("topic", required=False), repealed=f.boolean("repealed"),
        valid_from=valid_from, valid_to=valid_to, amendment=f.boolean("amendment"),
        gloss_en=f.string("gloss_en", required=False), text_source=f.string("text_source", required=False),
    )  # fmt: skip
    return None if problems else StatuteRecord(**record)


def _interpretation(raw: Any, problems: list[str], known_laws: Collection[str] | None) -> InterpretationRecord | None:
    f = _Fields(raw, _INTERPRETATION_FIELDS, problems)
    law = f.string("law", required=False)
    if law is not None and known_laws is not None and law not in known_laws:
        f.fail("law", f"unknown law {law!r}")
    record = dict(
        id=f.string("id"), source=f.string("source"), para=f.string("para", required=False),
        text=f.string("text"), articles=f.int_list("articles"), law=law,
        gloss_en=f.string("gloss_en", required=False),
    )  # fmt: skip
    return None if problems else InterpretationRecord(**record)


def _checklist(raw: Any, problems: list[str], known_laws: Collection[str] | None) -> ChecklistRecord | None:
    f = _Fields(raw, _CHECKLIST_FIELDS, problems)
    article, sub, key, label = _article_identity(f, "article")
    related = tuple(
        paragraph
        for index, item in enumerate(f.object_list("related"))
        if (paragraph := _related(item, problems, f"related[{index}]."))
    )
    record = dict(
        article=article, sub=sub, key=key, label=label, items=f.string_list("items", non_empty=True),
        items_alt=f.string_list("items_alt", required=False), charges=f.string_list("charges", suffix="罪"),
        related=related, items_source=f.string("items_source", required=False),
        items_alt_source=f.string("items_alt_source", required=False),
        charges_source=f.string("charges_source", required=False),
        gloss_en=f.string_list("gloss_en", required=False),
    )  # fmt: skip
    return None if problems else ChecklistRecord(**record)


def _related(raw: Any, problems: list[str], prefix: str) -> RelatedParagraph | None:
    before = len(problems)
    f = _Fields(raw, _RELATED_FIELDS, problems, prefix)
    if not f.valid:
        return None
    source, text = f.string("source"), f.string("text")
    interpretation_id = f.string("interpretation_id", required=False)
    if len(problems) > before:
        return None
    return RelatedParagraph(source, text, interpretation_id)  # type: ignore[arg-type]


def _term(f: _Fields, name: str) -> Term | None:
    """A nullable `term` object inside f (null means "not labelled")."""
    present, raw = f._get(name, required=False)
    if not present:
        return None
    before = len(f.problems)
    t = _Fields(raw, _TERM_FIELDS, f.problems, f"{f.prefix}{name}.")
    if not t.valid:
        return None
    months = t.integer("months", minimum=0, maximum=MAX_TERM_MONTHS)
    life, death = t.boolean("life", required=True), t.boolean("death", required=True)
    kind = t.string("kind", required=False)
    if kind is not None and kind not in TERM_KINDS:
        t.fail("kind", f"unknown sentence kind {kind!r}")
    suspended = t.boolean("suspended", default=None)
    if life and death:
        t.fail("", "life and death cannot both be true")
    if len(f.problems) > before:
        return None
    return Term(months, life, death, kind, suspended)  # type: ignore[arg-type]


def _case(raw: Any, problems: list[str], known_laws: Collection[str] | None) -> CaseRecord | None:
    f = _Fields(raw, _CASE_FIELDS, problems)
    label_source = f.string("label_source")
    if label_source is not None and label_source not in LABEL_SOURCES:
        f.fail("label_source", f"unknown value {label_source!r} (expected one of {', '.join(sorted(LABEL_SOURCES))})")
    per_defendant = []
    for index, item in enumerate(f.object_list("per_defendant")):
        d = _Fields(item, _DEFENDANT_FIELDS, problems, f"per_defendant[{index}].")
        if not d.valid:
            continue
        name, charges, term = d.string("name"), d.string_list("charges", suffix="罪"), _term(d, "term")
        per_defendant.append(DefendantLabel(name, charges, term))  # type: ignore[arg-type]
    duplicates = []
    for index, item in enumerate(f.object_list("duplicates")):
        d = _Fields(item, _DUPLICATE_FIELDS, problems, f"duplicates[{index}].")
        if not d.valid:
            continue
        duplicates.append(DuplicateRef(d.string("id"), d.string("source"), d.boolean("near")))  # type: ignore[arg-type]
    record = dict(
        id=f.string("id"), source=f.string("source"), fact=f.string("fact"),
        defendants=f.string_list("defendants"), charges=f.string_list("charges", suffix="罪"),
        articles=f.int_list("articles"), term=_term(f, "term"), label_source=label_source,
        origin=f.mapping("origin"), fine=f.integer("fine", required=False, minimum=0),
        per_defendant=tuple(per_defendant), court_level=f.string("court_level", required=False),
        gloss_en=f.string("gloss_en", required=False), duplicates=tuple(duplicates),
        penalty_bucket=f.string("penalty_bucket", required=False),
    )  # fmt: skip
    return None if problems else CaseRecord(**record)


_VALIDATORS = {"statute": _statute, "interpretation": _interpretation, "checklist": _checklist, "case": _case}


# --- public API -----------------------------------------------------------------------------


def detect_kind(record: dict[str, Any]) -> str:
    """Which corpus file a row belongs to, from its distinctive keys; ValueError if none fits."""
    if not isinstance(record, dict):
        raise ValueError("a record must be a JSON object")
    keys = set(record)
    if "fact" in keys:
        return "case"
    if "items" in keys and "article" in keys:
        return "checklist"
    if "number" in keys and "text" in keys:
        return "statute"
    if {"id", "text", "articles"} <= keys:
        return "interpretation"
    raise ValueError(
        "cannot tell the record kind: expected `fact` (case), `items` + `article` (checklist), "
        "`number` + `text` (statute) or `id` + `text` + `articles` (interpretation)"
    )


def validate_records(
    kind: str, rows: list[tuple[int, dict[str, Any]]], *, known_laws: Collection[str] | None = None
) -> list[CorpusRecord]:
    """Validate (line, object) rows of one kind; all records, or ImportValidationError for every problem.

    `known_laws`, when given, restricts the `law` of statutes and interpretations.
    Besides per-row schema checks, a file may not contain the same id (cases,
    interpretations), checklist key, or statute version (law, key, valid_from) twice.
    """
    records, errors = validate_records_partial(kind, rows, known_laws=known_laws)
    errors.raise_if_any()
    return [record for _, record in records]


def validate_records_partial(
    kind: str, rows: list[tuple[int, dict[str, Any]]], *, known_laws: Collection[str] | None = None,
    error_limit: int = MAX_REPORTED_ERRORS,
) -> tuple[list[tuple[int, CorpusRecord]], ErrorCollector]:
    """Like validate_records, but returns the valid (line, record) pairs beside the errors of the rest."""
    if kind not in _VALIDATORS:
        raise ValueError(f"unknown record kind {kind!r}; expected one of {', '.join(KINDS)}")
    validator = _VALIDATORS[kind]
    errors = ErrorCollector(error_limit)
    records: list[tuple[int, CorpusRecord]] = []
    first_line: dict[Any, int] = {}
    for line, raw in rows:
        problems: list[str] = []
        if isinstance(raw, dict):
            record = validator(raw, problems, known_laws)
        else:
            record = None
            problems.append(f"record: must be an object, got {_type_name(raw)}")
        for problem in problems:
            errors.add(line, problem)
        if record is None:
            continue
        identity = _identity(record)
        if identity in first_line:
            errors.add(line, f"{identity[0]}: duplicate of line {first_line[identity]}")
            continue
        first_line[identity] = line
        records.append((line, record))
    return records, errors


def _identity(record: CorpusRecord) -> tuple[Any, ...]:
    """What must be unique within one upload; the first element names the field in the error."""
    if isinstance(record, StatuteRecord):
        return ("key", record.law, record.key, record.valid_from)
    if isinstance(record, ChecklistRecord):
        return ("key", record.key)
    return ("id", record.id)
