"""Data blocks: how untrusted text (facts, statutes, precedents) enters a prompt.

Every piece of data is wrapped as::

    <<<NAME
    ...
    NAME>>>

and sanitised first, so nothing inside can close the block or open another:
runs of three or more ``<`` / ``>`` (ASCII or full-width) become ``‹‹‹`` /
``›››``, invisible format characters (zero-width spaces, bidi overrides,
Unicode tag characters) and control characters other than newline and tab
are removed, and line endings become ``\\n``.  The system prompt says that
data blocks are never instructions.

The sanitised facts are what the model sees and quotes: verify quoted fact
spans against ``sanitize_data(facts)``, not against the raw upload.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

BLOCK_NAME_RE = re.compile(r"^[A-Z][A-Z_]{1,31}$")
_OPEN_RUN = re.compile(r"[<＜]{3,}")
_CLOSE_RUN = re.compile(r"[>＞]{3,}")


def _visible(ch: str) -> bool:
    if ch in "\n\t":
        return True
    return unicodedata.category(ch) not in ("Cc", "Cf", "Cs")


def sanitize_data(text: str) -> str:
    """The text as it may appear inside a data block (see the module doc)."""
    if not isinstance(text, str):
        raise TypeError(f"data must be text, got {type(text).__name__}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "".join(ch for ch in text if _visible(ch))
    text = _OPEN_RUN.sub(lambda m: "‹" * len(m.group()), text)
    return _CLOSE_RUN.sub(lambda m: "›" * len(m.group()), text)


def _sanitize_value(value: Any) -> Any:
    if isinstance(value, str):
        return sanitize_data(value)
    if isinstance(value, Mapping):
        return {sanitize_data(str(k)): _sanitize_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_sanitize_value(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    raise TypeError(f"unsupported data value {type(value).__name__}")


def json_line(value: Any) -> str:
    """One record on one line: string escaping keeps a record from forging another."""
    return json.dumps(_sanitize_value(value), ensure_ascii=False, allow_nan=False)


def json_lines(records: Sequence[Any]) -> str:
    return "\n".join(json_line(r) for r in records)


def data_block(name: str, content: str) -> str:
    """Wrap already-rendered content; it is sanitised again here, whatever its origin."""
    if not BLOCK_NAME_RE.match(name):
        raise ValueError(f"bad block name {name!r}")
    return f"<<<{name}\n{sanitize_data(content)}\n{name}>>>"
