"""Strict JSON, written once: the checks behind the importers' JSON Lines reader
(lexlib/parsing/jsonl.py) and the reading of a model's reply (worker/agents/llm/jsonparse.py), and
the JSON types behind the corpus record validator (lexlib/parsing/records.py) and the stage schemas
(worker/agents/llm/schema.py). Pure: lexlib imports it from the core, as it does numerals.

Reading: Python's json module accepts NaN and Infinity, keeps the last of duplicate keys and decodes
"\\ud800" into a lone surrogate that PostgreSQL refuses, as it refuses NUL. ``loads`` refuses the
first two, ``check_strings`` the last two; each refusal is a ``NotStrict`` that says what was found,
and each caller words it in its own messages (the importer's line report, the client's JSONParseError).

Types: ``true`` is never an integer or a number, ``1.0`` is not an integer, and a number is finite.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["JSON_TYPES", "NotStrict", "check_strings", "has_json_type", "json_type", "loads", "wrong_type"]

# NUL and UTF-16 surrogates: PostgreSQL text cannot hold either.
_FORBIDDEN_CHAR_RE = re.compile("[\x00\ud800-\udfff]")


class NotStrict(ValueError):
    """Why a JSON text is refused. ``kind``: ``duplicate_key`` (``value`` the key), ``constant`` (the
    name: NaN, Infinity, -Infinity) or ``character`` (the first NUL or lone surrogate of ``string``)."""

    def __init__(self, kind: str, value: str, string: str = ""):
        super().__init__(f"{kind}: {value!r}")
        self.kind, self.value, self.string = kind, value, string


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: an object, or NotStrict at the first key given twice."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise NotStrict("duplicate_key", key)
            seen.add(key)
    return obj


def no_constant(name: str) -> Any:
    """``parse_constant``: NaN, Infinity and -Infinity are not JSON."""
    raise NotStrict("constant", name)


def loads(text: str, **hooks: Any) -> Any:
    """``json.loads`` refusing duplicate keys and the non-JSON constants (NotStrict); ``hooks`` are
    further json.loads arguments (``parse_int``, ``parse_float``)."""
    return json.loads(text, object_pairs_hook=unique_keys, parse_constant=no_constant, **hooks)


def check_strings(value: Any) -> None:
    """NotStrict for the first key or string value holding a NUL or a lone surrogate (iteratively: a
    deep value cannot exhaust the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings = [item]
        elif isinstance(item, dict):
            strings = list(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for string in strings:
            bad = _FORBIDDEN_CHAR_RE.search(string)
            if bad:
                raise NotStrict("character", bad.group(), string)


# --- types ---------------------------------------------------------------------------------------

JSON_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
# Python type → JSON type, in the order they are tried (bool is an int in Python, so it comes first).
_PYTHON_TYPES = ((type(None), "null"), (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                 (list, "array"), (dict, "object"))


def json_type(value: Any) -> str:
    """The JSON type of a parsed value (one of JSON_TYPES; a float is a "number" even when it is whole),
    else the Python type's name."""
    for python, name in _PYTHON_TYPES:
        if isinstance(value, python):
            return name
    return type(value).__name__


def has_json_type(value: Any, name: str) -> bool:
    """``value`` is of the JSON type ``name``: an integer is also a number, a number must be finite."""
    actual = json_type(value)
    if name == "number":
        return actual == "integer" or (actual == "number" and math.isfinite(value))
    return actual == name


def wrong_type(value: Any, *names: str) -> str | None:
    """None when ``value`` has one of the JSON types ``names``; else its own type (``json_type``), for the message."""
    return None if any(has_json_type(value, name) for name in names) else json_type(value)
