"""chain_verify: recompute the whole chain and name the first broken seq (C4, C5)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from lexlib.canonical import GENESIS_HASH, CanonicalError
from apps.audit.checkpoint import Checkpoint, checkpoint_load
from apps.audit.models import STORED_AT_US, AuditEvent

log = logging.getLogger(__name__)


@dataclass
class Report:
    count: int = 0
    head_seq: int | None = None
    head_hash: str | None = None
    # The first seq at which the chain is broken, and why.
    broken_seq: int | None = None
    problem: str = ""
    # Set when an anchor (checkpoint) was given.
    anchor: Checkpoint | None = None
    anchor_problem: str = ""

    @property
    def chain_ok(self) -> bool:
        return self.broken_seq is None

    @property
    def anchor_ok(self) -> bool | None:
        return None if self.anchor is None else not self.anchor_problem

    @property
    def ok(self) -> bool:
        return self.chain_ok and self.anchor_ok is not False

    def summary(self) -> str:
        head = f"{self.count} events, head seq {self.head_seq or 0} hash {self.head_hash or '-'}"
        anchor = "" if self.anchor is None else (
            f"checkpoint seq {self.anchor.head_seq or 0} count {self.anchor.count} of {self.anchor.created_at}")
        if self.ok:
            return f"ok: {head}" + (f"; matches {anchor}" if anchor else "")
        parts = []
        if not self.chain_ok:
            parts.append(f"BROKEN at seq {self.broken_seq}: {self.problem} ({self.count} events read)")
        if self.anchor_problem:
            parts.append(f"anchor MISMATCH ({anchor}): {self.anchor_problem}")
        if self.chain_ok:
            parts.append(f"the chain itself is consistent ({head})")
        return "; ".join(parts)


def _check_anchor(report: Report, anchor: Checkpoint, hash_at_anchor: str | None) -> str:
    if not anchor.signature_ok():
        return "the checkpoint's signature is invalid (forged or signed with another key)"
    if anchor.head_seq is not None:
        if hash_at_anchor is None:
            return f"there is no event {anchor.head_seq} any more (the tail was removed)"
        if hash_at_anchor != anchor.head_hash:
            return f"event {anchor.head_seq} has another hash than at the checkpoint (the chain was rewritten)"
    if report.count < anchor.count:
        return f"{report.count} events, fewer than the {anchor.count} at the checkpoint (events were removed)"
    return ""


def events_in_chain_order():
    return AuditEvent.objects.annotate(stored_at_us=STORED_AT_US).order_by("seq")


def chain_verify(*, anchor: Checkpoint | str | Path | None = None) -> Report:
    """Recompute every hash in seq order. One query, hence one consistent snapshot.

    Checks per event, in this order: seq follows the previous one (else the
    missing seq is reported), prev_hash equals the previous event's stored
    hash, and the stored hash equals the recomputed one. With ``anchor`` (a
    Checkpoint or the path of one), also: its signature, the hash of the event
    at its head seq, and that no fewer events exist than it counted.
    """
    if anchor is not None and not isinstance(anchor, Checkpoint):
        anchor = checkpoint_load(anchor)
    report = Report(anchor=anchor)
    expected_seq, expected_prev = 1, GENESIS_HASH
    hash_at_anchor = None
    for event in events_in_chain_order().iterator(chunk_size=2000):
        report.count += 1
        if report.broken_seq is None:
            if event.seq != expected_seq:
                report.broken_seq = expected_seq
                report.problem = f"seq {expected_seq} is missing (the next event is {event.seq})"
            elif event.prev_hash != expected_prev:
                report.broken_seq = event.seq
                report.problem = "prev_hash does not match the previous event's hash"
            else:
                try:
                    recomputed = event.compute_hash(at_us=event.stored_at_us)
                except CanonicalError as exc:
                    recomputed = f"(no canonical form: {exc})"
                if recomputed != event.hash:
                    report.broken_seq = event.seq
                    report.problem = "the stored hash does not match the event's content"
        if anchor is not None and event.seq == anchor.head_seq:
            hash_at_anchor = event.hash
        expected_seq, expected_prev = event.seq + 1, event.hash
        report.head_seq, report.head_hash = event.seq, event.hash
    if anchor is not None:
        report.anchor_problem = _check_anchor(report, anchor, hash_at_anchor)
    if not report.ok:
        log.error("audit chain verification failed: %s", report.summary())
    return report
