"""C7: the hashed bytes depend on the event, not on TimeZone, key order, float text or library versions."""

import datetime as dt
import json
import zoneinfo
from decimal import Decimal

import pytest

from lexlib.canonical import (
    GENESIS_HASH,
    CanonicalError,
    canonical_json,
    epoch_micros,
    event_content,
    event_hash,
    normalize,
)
from apps.audit.models import AuditEvent
from apps.audit.verify import chain_verify, events_in_chain_order
from tests.audit.conftest import append, sql

SHANGHAI = zoneinfo.ZoneInfo("Asia/Shanghai")


def golden_content(**changes) -> dict:
    fields = {"seq": 1, "at_us": epoch_micros(dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)), "actor_id": 7,
              "actor_username": "审查员", "role": "reviewer", "request_id": "r-1", "ip": "127.0.0.1",
              "action": "review.decide", "object_type": "cases.review", "object_id": "42", "before": {"status": "pending"},
              "after": {"status": "approved", "note": "引号\"\n\t", "n": [1, -2, 10**20]}, "reason": "事实清楚"}
    return event_content(**{**fields, **changes})


def test_the_canonical_bytes_and_hash_of_a_fixed_event_never_change():
    # Written down once; a change here means every stored chain stops verifying.
    assert canonical_json(golden_content()).decode() == (
        '{"action":"review.decide","actor":"审查员","actor_id":7,'
        '"after":{"n":[1,-2,100000000000000000000],"note":"引号\\"\\n\\t","status":"approved"},'
        '"at_us":1767323045678901,"before":{"status":"pending"},"ip":"127.0.0.1","object_id":"42",'
        '"object_type":"cases.review","reason":"事实清楚","request_id":"r-1","role":"reviewer","seq":1,"v":1}'
    )
    assert event_hash(GENESIS_HASH, golden_content()) == "03b11786612d448e92b20c1af537cf5c827e2d1ef29122e4641bdce8ee24ea9a"


def test_it_agrees_with_the_standard_library_on_plain_json():
    value = {"z": [None, True, False, 0, -1, 2**70], "a": {"中": "\x01\x1f\x7f\u2028 é"}, "": "\\/"}
    assert canonical_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_key_insertion_order_does_not_matter():
    one = {"b": 1, "a": {"y": [1, 2], "x": "中"}}
    two = {"a": {"x": "中", "y": [1, 2]}, "b": 1}
    assert canonical_json(normalize(one)) == canonical_json(normalize(two))
    assert event_hash(GENESIS_HASH, golden_content(after=one)) == event_hash(GENESIS_HASH, golden_content(after=two))


def test_the_time_enters_as_epoch_microseconds_whatever_the_zone():
    utc = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)
    assert epoch_micros(utc) == epoch_micros(utc.astimezone(SHANGHAI)) == 1767323045678901
    with pytest.raises(CanonicalError):
        epoch_micros(dt.datetime(2026, 1, 2))


def test_floats_are_stored_and_hashed_as_their_shortest_text():
    assert normalize({"p": 0.1, "big": 1e20, "d": Decimal("1.50"), "t": (1, 2)}) == {"p": "0.1", "big": "1e+20", "d": "1.50", "t": [1, 2]}
    with pytest.raises(CanonicalError):
        canonical_json({"p": 0.1})


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), Decimal("NaN"), "a\x00b", "\ud800", {1: "x"}, object(), b"x"])
def test_values_without_a_canonical_form_are_refused(bad):
    with pytest.raises(CanonicalError):
        normalize({"v": bad})


@pytest.mark.django_db
def test_stored_events_verify_under_any_session_time_zone():
    events = append(1, before={"z": 1, "a": {"d": [3, {"c": "键"}], "b": None}}, reason="理由") + append(
        1, before={"a": {"b": None, "d": [3, {"c": "键"}]}, "z": 1}, reason="理由")
    events += append(1, after={"score": 0.73, "huge": 1e300, "exact": 10**30})
    seen = {}
    for zone in ("Asia/Shanghai", "UTC", "America/St_Johns"):
        sql(f"SET LOCAL TimeZone = '{zone}'")
        assert sql("SHOW TimeZone")[0][0] == zone
        report = chain_verify()
        assert report.ok, (zone, report.summary())
        stored = events_in_chain_order().filter(seq__gte=events[0].seq)
        seen[zone] = [(e.seq, e.hash, e.compute_hash(at_us=e.stored_at_us), e.stored_at_us) for e in stored]
    assert seen["Asia/Shanghai"] == seen["UTC"] == seen["America/St_Johns"]
    assert [(seq, stored_hash, at_us) for seq, stored_hash, _, at_us in seen["UTC"]] == [
        (e.seq, e.hash, epoch_micros(e.at)) for e in events]
    assert all(stored_hash == recomputed for _, stored_hash, recomputed, _ in seen["UTC"])
    # Same content, other key order: identical canonical bytes.
    first, second = AuditEvent.objects.filter(seq__in=[events[0].seq, events[1].seq]).order_by("seq")
    assert canonical_json(first.before) == canonical_json(second.before)
    assert AuditEvent.objects.get(seq=events[2].seq).after == {"score": "0.73", "huge": "1e+300", "exact": 10**30}


@pytest.mark.django_db
def test_a_datetime_loaded_in_a_switched_session_zone_is_not_trusted_for_hashing():
    """Why the verifier reads EXTRACT(EPOCH FROM at): Django's loader assumes the zone it set (UTC)."""
    event = append(1)[0]
    sql("SET LOCAL TimeZone = 'Asia/Shanghai'")
    reloaded = events_in_chain_order().get(seq=event.seq)
    assert reloaded.stored_at_us == epoch_micros(event.at)
    assert reloaded.compute_hash(at_us=reloaded.stored_at_us) == event.hash
