"""C4 and C5: what the owner (or a superuser) does with triggers off is found, by the chain or by a signed checkpoint."""

import dataclasses
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from lexlib.canonical import event_hash
from apps.audit.checkpoint import checkpoint_create, checkpoint_load
from apps.audit.models import AuditEvent
from apps.audit.verify import chain_verify
from tests.audit.conftest import append, tamper

pytestmark = pytest.mark.django_db


def checkpoint_now():
    report = chain_verify()
    assert report.ok, report.summary()
    return checkpoint_create(head_seq=report.head_seq, head_hash=report.head_hash, count=report.count)


def recompute_chain_from(seq: int) -> None:
    """A DBA covering their tracks: rewrite every hash from ``seq`` on so the chain is consistent again."""
    previous = AuditEvent.objects.get(seq=seq - 1).hash if seq > 1 else "0" * 64
    for event in AuditEvent.objects.filter(seq__gte=seq).order_by("seq"):
        new_hash = event_hash(previous, event.content())
        tamper("UPDATE audit_event SET prev_hash = %s, hash = %s WHERE seq = %s", [previous, new_hash, event.seq])
        previous = new_hash


# --- C4: the chain alone ------------------------------------------------------------------------------

def test_an_intact_chain_verifies(events):
    report = chain_verify()
    assert report.ok and report.head_seq == events[-1].seq and report.head_hash == events[-1].hash
    assert report.count == AuditEvent.objects.count()


def test_an_edited_event_is_named_by_its_seq(events, capsys):
    victim = events[1]
    tamper("UPDATE audit_event SET after = %s WHERE seq = %s", ['{"i": 1000}', victim.seq])
    report = chain_verify()
    assert not report.ok and report.broken_seq == victim.seq
    assert "does not match the event's content" in report.problem
    with pytest.raises(CommandError, match=f"BROKEN at seq {victim.seq}:"):
        call_command("verify_audit_chain")


def test_an_edit_to_a_float_the_canonical_form_cannot_hold_is_a_break_too(events):
    tamper("UPDATE audit_event SET after = '{\"i\": 1.5}' WHERE seq = %s", [events[3].seq])
    assert chain_verify().broken_seq == events[3].seq


def test_a_deleted_middle_event_is_reported_as_a_gap(events):
    victim = events[2]
    tamper("DELETE FROM audit_event WHERE seq = %s", [victim.seq])
    report = chain_verify()
    assert report.broken_seq == victim.seq
    assert report.problem == f"seq {victim.seq} is missing (the next event is {victim.seq + 1})"
    with pytest.raises(CommandError, match=f"BROKEN at seq {victim.seq}"):
        call_command("verify_audit_chain")


def test_a_relinked_event_is_reported_at_the_broken_link(events):
    victim = events[3]
    forged_prev = "a" * 64
    # Self-consistent row, wrong link.
    victim.prev_hash = forged_prev
    tamper("UPDATE audit_event SET prev_hash = %s, hash = %s WHERE seq = %s", [forged_prev, victim.compute_hash(), victim.seq])
    report = chain_verify()
    assert report.broken_seq == victim.seq and "prev_hash" in report.problem


def test_the_command_prints_ok_for_an_intact_chain(events, capsys):
    call_command("verify_audit_chain")
    assert capsys.readouterr().out.startswith(f"ok: {AuditEvent.objects.count()} events, head seq {events[-1].seq}")


# --- C5: against a signed checkpoint --------------------------------------------------------------------

def test_a_removed_tail_passes_the_chain_but_not_the_checkpoint(events):
    anchor = checkpoint_now()
    tamper("DELETE FROM audit_event WHERE seq >= %s", [events[3].seq])
    assert chain_verify().ok, "a cut tail leaves a valid shorter chain: only the anchor can tell"
    report = chain_verify(anchor=anchor)
    assert not report.ok and report.chain_ok and report.anchor_ok is False
    assert "no event" in report.anchor_problem and str(events[-1].seq) in report.anchor_problem


def test_a_recomputed_chain_passes_the_chain_but_not_the_checkpoint(events):
    anchor = checkpoint_now()
    tamper("UPDATE audit_event SET reason = 'rewritten' WHERE seq = %s", [events[1].seq])
    assert chain_verify().broken_seq == events[1].seq
    recompute_chain_from(events[1].seq)
    assert chain_verify().ok, "a fully recomputed chain is self-consistent"
    report = chain_verify(anchor=anchor)
    assert report.anchor_ok is False and "rewritten" in report.anchor_problem


def test_later_events_do_not_disturb_an_older_checkpoint(events):
    anchor = checkpoint_now()
    append(3)
    report = chain_verify(anchor=anchor)
    assert report.ok and report.anchor_ok is True and report.count == anchor.count + 3


def test_a_checkpoint_with_a_bad_signature_is_rejected(events):
    anchor = checkpoint_now()
    inflated = dataclasses.replace(anchor, count=anchor.count - 1)
    assert chain_verify(anchor=inflated).anchor_problem.startswith("the checkpoint's signature is invalid")
    with override_settings(LEXTRACE_AUDIT_SIGNING_KEY="another-key-" + "x" * 40):
        foreign = checkpoint_now()
        assert chain_verify(anchor=foreign).anchor_ok is True
    assert "signature is invalid" in chain_verify(anchor=foreign).anchor_problem
    assert chain_verify(anchor=anchor).anchor_ok is True


def test_the_commands_write_and_check_a_checkpoint_file(events, tmp_path, capsys):
    path = tmp_path / "head.json"
    call_command("audit_checkpoint", out=str(path))
    saved = json.loads(path.read_text())
    assert saved["head_seq"] == events[-1].seq and saved["head_hash"] == events[-1].hash
    assert saved["count"] == AuditEvent.objects.count() and len(saved["signature"]) == 64
    assert checkpoint_load(path).signature_ok()
    with pytest.raises(CommandError, match="never overwritten"):
        call_command("audit_checkpoint", out=str(path))

    capsys.readouterr()
    call_command("verify_audit_chain", anchor=str(path))
    assert "matches checkpoint" in capsys.readouterr().out

    tamper("DELETE FROM audit_event WHERE seq = %s", [events[-1].seq])
    with pytest.raises(CommandError, match="anchor MISMATCH"):
        call_command("verify_audit_chain", anchor=str(path))

    with pytest.raises(CommandError, match="no checkpoint written: anchor MISMATCH"):
        call_command("audit_checkpoint", out=str(tmp_path / "next.json"), previous=str(path))
    assert not (tmp_path / "next.json").exists()

    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({**saved, "head_seq": events[-2].seq, "head_hash": events[-2].hash, "count": saved["count"] - 1}))
    with pytest.raises(CommandError, match="signature is invalid"):
        call_command("verify_audit_chain", anchor=str(forged))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    with pytest.raises(CommandError, match="not JSON"):
        call_command("verify_audit_chain", anchor=str(garbage))


def test_no_checkpoint_is_written_for_a_broken_chain(events, tmp_path):
    tamper("UPDATE audit_event SET reason = 'x' WHERE seq = %s", [events[0].seq])
    with pytest.raises(CommandError, match="no checkpoint written"):
        call_command("audit_checkpoint", out=str(tmp_path / "cp.json"))
    assert not (tmp_path / "cp.json").exists()
