"""A strict JSON Lines reader for admin uploads.

Python's json module is lenient in ways that hurt an importer: it accepts NaN
and Infinity, keeps the last of duplicate keys, decodes "\\ud800" into a lone
surrogate that PostgreSQL later refuses, and recurses on deep nesting.  This
reader refuses all of that with a line-numbered reason, checks every line before
giving up (the admin gets the complete report), and returns nothing unless the
whole file is clean. The strict checks themselves are worker/agents/strictjson.py's
(the LLM client reads a model's reply with the same); the limits and the wording are this reader's.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from worker.agents import strictjson

from .errors import MAX_REPORTED_ERRORS, ErrorCollector

DEFAULT_MAX_LINES = 200_000
DEFAULT_MAX_LINE_BYTES = 2_000_000
DEFAULT_MAX_DEPTH = 20
# Longer integers are not identifiers or counts we could store; Python would also
# burn CPU converting them (and refuses beyond 4300 digits with a confusing error).
MAX_INT_DIGITS = 20

_BOM = "\ufeff"
# Characters that matter for nesting depth: string delimiters, escapes, brackets.
_STRUCTURE_RE = re.compile(r'["\\\[\]{}]')
# The top-level value that is not an object, as the report names it.
_NOT_AN_OBJECT = {"array": "an array", "string": "a string", "boolean": "a boolean", "null": "null",
                  "integer": "a number", "number": "a number"}


class _Reject(Exception):
    """Raised from json hooks; carries the reason shown to the admin."""


def read_jsonl(
    data: bytes,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> list[tuple[int, dict[str, Any]]]:
    """Parse JSONL bytes into (line number, object) pairs; raise ImportValidationError on any bad line.

    Blank lines are skipped (but count towards `max_lines` and the numbering, so
    line numbers match the admin's editor); CRLF endings are accepted.
    """
    records, errors = read_jsonl_partial(data, max_lines=max_lines, max_line_bytes=max_line_bytes, max_depth=max_depth)
    errors.raise_if_any()
    return records


def read_jsonl_partial(
    data: bytes,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    error_limit: int = MAX_REPORTED_ERRORS,
) -> tuple[list[tuple[int, dict[str, Any]]], ErrorCollector]:
    """Like read_jsonl, but returns the good lines beside the errors of the bad ones, so an
    importer can also check the well-formed records and report everything in one go."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("read_jsonl expects bytes")
    errors = ErrorCollector(error_limit)
    raw_lines = bytes(data).split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # the newline that ends the last line does not start a new one
    if len(raw_lines) > max_lines:
        errors.add(max_lines + 1, f"too many lines: the limit is {max_lines}")
        raw_lines = raw_lines[:max_lines]

    records: list[tuple[int, dict[str, Any]]] = []
    for index, raw in enumerate(raw_lines):
        line_no = index + 1
        try:
            obj = _parse_line(raw, max_line_bytes=max_line_bytes, max_depth=max_depth)
        except _Reject as exc:
            errors.add(line_no, str(exc))
            continue
        if obj is not None:
            records.append((line_no, obj))
    return records, errors


def _parse_line(raw: bytes, *, max_line_bytes: int, max_depth: int) -> dict[str, Any] | None:
    """One line -> its object, None for a blank line, or _Reject with the reason."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]  # Windows line ending
    if len(raw) > max_line_bytes:
        raise _Reject(f"line is {len(raw)} bytes, the limit is {max_line_bytes}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Reject(f"invalid UTF-8 at byte {exc.start + 1}") from None
    if text.startswith(_BOM):
        raise _Reject("starts with a UTF-8 byte-order mark (BOM); save the file as UTF-8 without BOM")
    if not text.strip(" \t\r"):
        return None
    if "\x00" in text:
        raise _Reject(f"NUL character at column {text.index(chr(0)) + 1}")
    depth = _nesting_depth(text, max_depth)
    if depth > max_depth:
        raise _Reject(f"nested deeper than {max_depth} levels")
    try:
        value = strictjson.loads(text, parse_int=_bounded_int, parse_float=_finite_float)
    except _Reject:
        raise
    except strictjson.NotStrict as refusal:
        raise _Reject(_reason(refusal)) from None
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise _Reject(f"unexpected data after the JSON value at column {exc.colno}") from None
        # json's "Unterminated string starting at" names its column itself
        raise _Reject(f"invalid JSON: {exc.msg.removesuffix(' at')} at column {exc.colno}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # defensive: hooks cover the known cases
        raise _Reject(f"invalid JSON: {type(exc).__name__}") from None
    if not isinstance(value, dict):
        kind = strictjson.json_type(value)
        raise _Reject(f"the line must be a JSON object, not {_NOT_AN_OBJECT.get(kind, kind)}")
    # Raw NULs were refused above and strict UTF-8 decoding never yields surrogates,
    # so only \u escapes can smuggle them in: skip the walk when there are none.
    if "\\u" in text:
        try:
            strictjson.check_strings(value)
        except strictjson.NotStrict as refusal:
            raise _Reject(_reason(refusal)) from None
    return value


def _reason(refusal: strictjson.NotStrict) -> str:
    """A strict-JSON refusal as the admin's report words it."""
    if refusal.kind == "duplicate_key":
        return f"duplicate key {_short(refusal.value)}"
    if refusal.kind == "constant":
        return f"{refusal.value} is not valid JSON"
    char = refusal.value
    what = "NUL character (\\u0000)" if char == "\x00" else f"lone surrogate \\u{ord(char):04x}"
    return f"{what} in a string"


def _nesting_depth(text: str, limit: int) -> int:
    """Bracket depth outside strings, counted without recursion (json.loads would recurse).

    Returns as soon as the depth passes `limit`.  On malformed input the count may
    be off, which only changes which reason is reported for an invalid line.
    """
    if text.count("[") + text.count("{") <= limit:
        return 0  # cannot be deeper than the number of opening brackets
    depth = deepest = 0
    in_string = False
    escaped_at = -1
    for match in _STRUCTURE_RE.finditer(text):
        char, pos = match.group(), match.start()
        if in_string:
            if pos == escaped_at:
                continue  # the character after a backslash is literal
            if char == "\\":
                escaped_at = pos + 1
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def _bounded_int(digits: str) -> int:
    # Runs before int(): Python's own 4300-digit guard would otherwise fire first.
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Reject(f"integer with more than {MAX_INT_DIGITS} digits")
    return int(digits)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {_short(text)} is out of range")
    return value


def _short(text: str, limit: int = 40) -> str:
    shown = text if len(text) <= limit else text[:limit] + "…"
    return repr(shown)
