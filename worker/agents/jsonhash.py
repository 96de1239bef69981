"""The one JSON/hash helper of the core and the services: deterministic JSON bytes and sha256 of
texts. (The audit trail's canonical form, lexlib/canonical.py, is a serializer of its own with a
golden test: it refuses floats, so hashes of the chain never depend on float formatting.)"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """Deterministic UTF-8 JSON: sorted keys, no whitespace, non-ASCII kept, NaN and infinities refused."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def sha256_text(text: str | None) -> str:
    """sha256 (hex) of a text's UTF-8 bytes; None counts as the empty text."""
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()
