"""The import formats, what a converter returns, and format detection.

A converter turns a file in someone else's format (CAIL2018, LeCaRD, a court
judgment, a statute text) into raw records of our own schema (the dicts that
records.validate_records checks), so every format goes through the same strict
validation, duplicate detection and all-or-nothing apply as our JSONL. What a
converter cannot convert it refuses by line, with the reason; it never guesses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from .errors import WHOLE_DOCUMENT, ErrorCollector, ImportValidationError, LineError
from .jsonl import read_jsonl, read_jsonl_partial

FORMATS = ("lextrace", "cail2018", "lecard", "judgment", "statute-txt")
DOCUMENT_SUFFIXES = (".txt", ".docx", ".pdf")
JSON_SUFFIXES = (".jsonl", ".json")
# Facts shorter than this (normalised) are empty shells such as "经审理查明：" (shared/data README).
MIN_FACT_CHARS = 20
# Refusal reports are complete: the admin must see every refused record's reason.
REPORT_ALL = 1_000_000


@dataclass
class Converted:
    """Raw records of our schema by line, and the lines the converter refused."""

    kind: str  # "case" or "statute"
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    # Per line, what the admin should see beside the record (e.g. a judgment's parsed outcome).
    notes: dict[int, dict[str, Any]] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)  # about the file as a whole (e.g. its encoding)

    def refuse(self, line: int, reason: str) -> None:
        self.errors.append(LineError(line, reason))


def read_json_records(data: bytes) -> tuple[list[tuple[int, dict[str, Any]]], ErrorCollector]:
    """JSON lines, or one JSON object spread over several lines (a LeCaRD candidate file).

    Both are read with the strict JSONL reader (duplicate keys, NaN, depth …). A file that is
    not valid JSON lines but is one valid object is taken as that object on line 1.
    """
    rows, errors = read_jsonl_partial(data, error_limit=REPORT_ALL)
    if errors and data.lstrip()[:1] == b"{":
        try:
            # Raw newlines cannot occur inside JSON strings, so joining lines keeps every value.
            whole = read_jsonl(b" ".join(data.splitlines()))
        except ImportValidationError:
            return rows, errors
        if len(whole) == 1:
            return [(1, whole[0][1])], ErrorCollector()
    return rows, errors


def foreign_text(data: bytes) -> tuple[bytes, str | None]:
    """Datasets as people hold them: UTF-8 (a byte-order mark is dropped) or GB18030/GBK (one of
    the CAIL2018 exercise files is GBK). Returns UTF-8 bytes and a note for the report; bytes that
    are neither are returned as they are, for the strict reader to refuse line by line."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:], "a UTF-8 byte-order mark at the start of the file was ignored"
    try:
        data.decode("utf-8")
        return data, None
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030").encode("utf-8"), "the file is not UTF-8; it was read as GB18030 (GBK)"
    except UnicodeDecodeError:
        return data, None


def normalise_charge(name: str) -> str:
    """A charge name as our corpus writes it: CAIL brackets removed, ending in 罪.

    CAIL2018 writes "[掩饰、隐瞒][犯罪所得、犯罪所得收益]" and "非法[持有、私藏][枪支、弹药]"
    (the alternatives of one statutory charge) and leaves 罪 off; the statute says
    "掩饰、隐瞒犯罪所得、犯罪所得收益罪".
    """
    cleaned = "".join(ch for ch in name.strip() if ch not in "[]［］ \u3000")
    if cleaned and not cleaned.endswith("罪"):
        cleaned += "罪"
    return cleaned


# --- detection -----------------------------------------------------------------------------

_CAIL_KEYS = frozenset({"fact", "meta"})
_LECARD_KEY_SETS = (
    frozenset({"ridx", "q"}),  # LeCaRD query
    frozenset({"ajjbqk"}),  # LeCaRD candidate document
    frozenset({"id", "query"}),  # LeCaRDv2 query
    frozenset({"pid", "qw"}),  # LeCaRDv2 candidate document
)


def format_of_record(record: Any) -> str | None:
    """The format one JSON object belongs to, from its distinctive keys; None when unknown."""
    if not isinstance(record, dict):
        return None
    keys = set(record)
    if _CAIL_KEYS <= keys and isinstance(record.get("meta"), dict):
        return "cail2018"
    if any(wanted <= keys for wanted in _LECARD_KEY_SETS):
        return "lecard"
    from .records import detect_kind

    try:
        detect_kind(record)
    except ValueError:
        return None
    return "lextrace"


def detect_format(filename: str, data: bytes) -> str:
    """The format of one file when it is unambiguous; ImportValidationError saying why not otherwise."""
    suffix = PurePath(filename).suffix.lower()
    if suffix in JSON_SUFFIXES:
        # The first lines tell the format of a JSON lines file; only a one-object file needs all of it.
        data = foreign_text(data)[0]
        rows, _ = read_jsonl_partial(b"\n".join(data.split(b"\n", 50)[:50]))
        if not rows:
            rows, _ = read_json_records(data)
        # A record we cannot place is a validation problem of its file's format, not a second format.
        found = {format_of_record(row) for _, row in rows[:50]} - {None}
        if len(found) == 1:
            return found.pop()
        if not found:
            # Our own schema by default: its strict reader then reports, line by line, what is wrong
            # (a charge table, {category: [charges]}, is also one unrecognised object).
            return "lextrace"
        raise _undetectable(f"its records look like {' and '.join(sorted(found))}")
    if suffix in DOCUMENT_SUFFIXES:
        from .documents import extract_text

        text = extract_text(data, filename).text
        return detect_document_format(text)
    raise _undetectable(f"unsupported file type {suffix or '(none)'}")


def detect_document_format(text: str) -> str:
    from .judgment import looks_like_judgment
    from .statute_text import looks_like_statute

    judgment, statute = looks_like_judgment(text), looks_like_statute(text)
    if judgment and not statute:
        return "judgment"
    if statute and not judgment:
        return "statute-txt"
    raise _undetectable("the text could be a judgment or a statute" if judgment else
                        "the text is neither a judgment (判决如下) nor a statute (lines starting 第…条)")


def _undetectable(why: str) -> ImportValidationError:
    return ImportValidationError([LineError(WHOLE_DOCUMENT, f"cannot tell the format ({why}); choose it with --format "
                                                            f"({' | '.join(FORMATS)}) or on the upload form")])
