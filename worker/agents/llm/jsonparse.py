"""Strict parsing of a model's JSON reply: no NaN or infinities, no duplicate keys, no lone surrogates."""

from __future__ import annotations

import json
import re
from typing import Any

from worker.agents.llm.errors import JSONParseError

def _reject_constant(name: str) -> Any:
    raise JSONParseError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JSONParseError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _check_strings(value: Any) -> None:
    """Reject lone surrogates and NUL: they parse as JSON but break storage."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            texts = [item]
        elif isinstance(item, dict):
            texts = list(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for text in texts:
            if "\x00" in text:
                raise JSONParseError("NUL character in a string")
            if any("\ud800" <= ch <= "\udfff" for ch in text):
                raise JSONParseError("lone surrogate in a string")


_FENCE_RE = re.compile(r"^```(?:json)?[ \t]*\n(.*)\n```$", re.DOTALL)


def parse_json_strict(text: str, *, allow_fence: bool = False) -> Any:
    """Parse exactly one JSON value; anything before or after it is an error.

    No NaN/Infinity, no duplicate keys, no lone surrogates or NUL.  With
    ``allow_fence`` one complete outer Markdown fence (```json ... ```) is
    accepted - only for servers without structured output.
    """
    if not isinstance(text, str):
        raise JSONParseError(f"expected text, got {type(text).__name__}")
    body = text.strip()
    if allow_fence:
        m = _FENCE_RE.match(body)
        if m:
            body = m.group(1).strip()
    if not body:
        raise JSONParseError("empty reply")
    try:
        value = json.loads(body, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except JSONParseError:
        raise
    except json.JSONDecodeError as exc:
        raise JSONParseError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise JSONParseError("nesting too deep") from None
    _check_strings(value)
    return value
