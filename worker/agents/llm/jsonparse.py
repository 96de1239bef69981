"""Strict parsing of a model's JSON reply: no NaN or infinities, no duplicate keys, no lone surrogates.

The checks are worker/agents/strictjson.py's (the importers' reader uses the same); this module words
them as the client's JSONParseError."""

from __future__ import annotations

import json
import re
from typing import Any

from worker.agents import strictjson
from worker.agents.llm.errors import JSONParseError


def _message(refusal: strictjson.NotStrict) -> str:
    if refusal.kind == "duplicate_key":
        return f"duplicate key {refusal.value!r}"
    if refusal.kind == "constant":
        return f"{refusal.value} is not JSON"
    return "NUL character in a string" if "\x00" in refusal.string else "lone surrogate in a string"


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
        value = strictjson.loads(body)
        strictjson.check_strings(value)
    except strictjson.NotStrict as refusal:
        raise JSONParseError(_message(refusal)) from None
    except json.JSONDecodeError as exc:
        raise JSONParseError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise JSONParseError("nesting too deep") from None
    return value
