"""Signed checkpoints of the chain head, kept outside the database (INV-5, C5).

The chain alone cannot show that its tail was cut off, or that someone with
superuser rights recomputed every hash after an edit. A checkpoint records
(head seq, head hash, count, time) and is signed with HMAC-SHA256; copied to
write-once storage on a schedule, it pins the chain up to that point.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from django.conf import settings

from lexlib.canonical import canonical_json

FORMAT = "lextrace-audit-checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read or is malformed."""


def signing_key() -> bytes:
    configured = settings.LEXTRACE_AUDIT_SIGNING_KEY
    if configured:
        return configured.encode("utf-8")
    # Default: a key derived from SECRET_KEY, so a fresh install can sign without
    # extra setup. Consequences: whoever knows SECRET_KEY can forge checkpoints, and
    # rotating SECRET_KEY makes old checkpoints unverifiable. Production sets
    # LEXTRACE_AUDIT_SIGNING_KEY (or _FILE) to a key kept away from the database host.
    return hmac.new(settings.SECRET_KEY.encode("utf-8"), b"lextrace.audit.checkpoint.v1", hashlib.sha256).digest()


@dataclass(frozen=True)
class Checkpoint:
    head_seq: int | None
    head_hash: str | None
    count: int
    created_at: str
    signature: str = ""
    format: str = FORMAT

    def payload(self) -> dict:
        return {"format": self.format, "head_seq": self.head_seq, "head_hash": self.head_hash,
                "count": self.count, "created_at": self.created_at}

    def expected_signature(self) -> str:
        return hmac.new(signing_key(), canonical_json(self.payload()), hashlib.sha256).hexdigest()

    def signature_ok(self) -> bool:
        return hmac.compare_digest(self.signature.encode("ascii", "replace"), self.expected_signature().encode("ascii"))

    def dumps(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def checkpoint_create(*, head_seq: int | None, head_hash: str | None, count: int) -> Checkpoint:
    created_at = dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
    unsigned = Checkpoint(head_seq=head_seq, head_hash=head_hash, count=count, created_at=created_at)
    return Checkpoint(**{**asdict(unsigned), "signature": unsigned.expected_signature()})


def checkpoint_loads(text: str) -> Checkpoint:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CheckpointError(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"not a {FORMAT} checkpoint")
    head_seq, head_hash, count = data.get("head_seq"), data.get("head_hash"), data.get("count")
    signature, created_at = data.get("signature"), data.get("created_at")
    valid = (
        (head_seq is None or (type(head_seq) is int and head_seq >= 1))
        and (head_hash is None or (isinstance(head_hash, str) and re.fullmatch(r"[0-9a-f]{64}", head_hash)))
        and (head_seq is None) == (head_hash is None)
        and type(count) is int and count >= 0
        and isinstance(signature, str) and isinstance(created_at, str)
    )
    if not valid:
        raise CheckpointError("malformed checkpoint fields")
    return Checkpoint(head_seq=head_seq, head_hash=head_hash, count=count, created_at=created_at, signature=signature)


def checkpoint_load(path: str | Path) -> Checkpoint:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CheckpointError(f"cannot read {path}: {exc.strerror}") from None
    return checkpoint_loads(text)
