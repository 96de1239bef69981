"""The canonical form of an audit event: the bytes its hash covers.

The writer (services.audit_append) and the verifier (verify.chain_verify) both
hash through ``event_hash`` and nothing else, so they cannot drift apart.

Canonical JSON, version 1 (``"v": 1`` inside every hashed object):

* values are ``null``, ``true``, ``false``, integers, strings, arrays and
  objects with string keys; nothing else reaches the serializer;
* integers are written in plain decimal (no exponent, no leading zeros);
* floats never appear: ``normalize`` turns a finite float into the string of
  its shortest round-trip representation (``0.1`` → ``"0.1"``) and refuses
  NaN and infinities; a ``Decimal`` becomes ``str(decimal)``. This is what is
  stored as well as what is hashed, so a JSONB round trip (which may turn
  ``1e20`` into ``100000000000000000000``) cannot change a hash;
* object keys are sorted by Unicode code point; no whitespace anywhere;
* strings are written as UTF-8 without ``\\u`` escapes for non-ASCII text;
  only ``"``, ``\\`` and U+0000–U+001F are escaped (``\\b \\f \\n \\r \\t`` in
  short form, the rest as ``\\u00xx`` with lower-case hex). NUL and lone
  surrogates are refused (PostgreSQL text cannot hold NUL; a lone surrogate
  has no UTF-8 form).

The serializer below is our own (not ``json.dumps``), so a Python or library
upgrade cannot change the bytes. The event time enters as integer
microseconds since the Unix epoch, never as text, so the session TimeZone and
locale play no part. The verifier takes those microseconds from PostgreSQL
(``EXTRACT(EPOCH FROM at)``), not from a loaded datetime: Django's loader
assumes the session TimeZone it set, and a session switched to another zone
reads shifted instants (seen in the C7 test).

hash = hex(sha256(prev_hash as 64 ASCII hex characters ‖ canonical bytes)).
The first event's prev_hash is 64 zeros.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import uuid
from decimal import Decimal

FORMAT_VERSION = 1
GENESIS_HASH = "0" * 64
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ONE_MICROSECOND = dt.timedelta(microseconds=1)

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


class CanonicalError(ValueError):
    """A value that has no canonical form (NaN, NUL, an unknown type…)."""


def _text(value: str) -> str:
    # str subclasses (TextChoices…) become plain str so their __str__ cannot interfere.
    value = str.__str__(value)
    if "\x00" in value:
        raise CanonicalError("text must not contain NUL (U+0000)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise CanonicalError("text must not contain lone surrogates") from None
    return value


def normalize(value):
    """The JSON value that is stored and hashed for ``value`` (see the module docstring)."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalError(f"non-finite number {value!r} has no canonical form")
        return repr(float(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise CanonicalError(f"non-finite number {value!r} has no canonical form")
        return str(value)
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [normalize(item) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalError(f"object keys must be strings, got {type(key).__name__}")
            out[_text(key)] = normalize(item)
        return out
    raise CanonicalError(f"{type(value).__name__} has no canonical JSON form; convert it first")


def _string(value: str) -> str:
    def escape(match: re.Match) -> str:
        ch = match.group(0)
        return _SHORT_ESCAPES.get(ch) or f"\\u{ord(ch):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, value) + '"'


def _encode(value, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif type(value) is int:
        out.append(str(value))
    elif type(value) is str:
        out.append(_string(_text(value)))
    elif type(value) is list:
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    elif type(value) is dict:
        out.append("{")
        for i, key in enumerate(sorted(value)):
            if type(key) is not str:
                raise CanonicalError("object keys must be strings")
            if i:
                out.append(",")
            out.append(_string(_text(key)))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    else:
        # Floats included: normalize() must have turned them into strings.
        raise CanonicalError(f"{type(value).__name__} is not in canonical form; pass it through normalize()")


def canonical_json(value) -> bytes:
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode("utf-8")


def epoch_micros(moment: dt.datetime) -> int:
    if moment.tzinfo is None:
        raise CanonicalError("event time must be timezone-aware")
    return (moment - EPOCH) // _ONE_MICROSECOND


def event_content(*, seq: int, at_us: int, actor_id, actor_username: str, role: str, request_id: str, ip: str,
                  action: str, object_type: str, object_id: str, before, after, reason: str) -> dict:
    """Everything of an event that its hash covers, besides prev_hash."""
    return {
        "v": FORMAT_VERSION,
        "seq": seq,
        "at_us": at_us,
        "actor_id": actor_id,
        "actor": actor_username,
        "role": role,
        "request_id": request_id,
        "ip": ip,
        "action": action,
        "object_type": object_type,
        "object_id": object_id,
        "before": before,
        "after": after,
        "reason": reason,
    }


def event_hash(prev_hash: str, content: dict) -> str:
    if not re.fullmatch(r"[0-9a-f]{64}", prev_hash or ""):
        raise CanonicalError("prev_hash must be 64 lower-case hex characters")
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_json(content)).hexdigest()
