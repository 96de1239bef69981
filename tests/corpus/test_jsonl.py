"""The strict JSONL reader: every malformed line is reported, nothing is half-imported."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexlib.parsing.errors import MAX_REPORTED_ERRORS, ImportValidationError, LineError
from lexlib.parsing.jsonl import read_jsonl


def reasons(data: bytes, **limits) -> dict[int, str]:
    with pytest.raises(ImportValidationError) as info:
        read_jsonl(data, **limits)
    return {error.line: error.reason for error in info.value.errors}


def test_it_reads_objects_with_their_line_numbers_and_skips_blank_lines():
    data = '{"a": 1}\n\n  \n{"b": "刑法"}\n'.encode()
    assert read_jsonl(data) == [(1, {"a": 1}), (4, {"b": "刑法"})]


def test_it_reads_crlf_files_exactly_like_lf_files():
    lf = '{"a": 1}\n{"b": [1, 2]}\n'.encode()
    assert read_jsonl(lf.replace(b"\n", b"\r\n")) == read_jsonl(lf)


def test_it_treats_a_stray_carriage_return_between_tokens_as_whitespace():
    assert read_jsonl(b'{"a":\r 1}\n') == [(1, {"a": 1})]


def test_it_accepts_a_last_line_without_newline_and_an_empty_file():
    assert read_jsonl(b'{"a": 1}') == [(1, {"a": 1})]
    assert read_jsonl(b"") == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"a": "\xff"}', "invalid UTF-8"),
        (b'{"a": "\xed\xa0\x80"}', "invalid UTF-8"),  # a surrogate encoded in UTF-8
        (b'\xef\xbb\xbf{"a": 1}', "byte-order mark"),
        (b'{"a": "\\ud800"}', "lone surrogate \\ud800"),
        (b'{"\\udfff": 1}', "lone surrogate"),
        (b'{"a": "x\x00"}', "NUL character"),
        (b'{"a": ["\\u0000"]}', "NUL character"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"a": {"b": 1, "b": 1}}', "duplicate key 'b'"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
        (b'{"a": Infinity}', "Infinity is not valid JSON"),
        (b'{"a": -Infinity}', "-Infinity is not valid JSON"),
        (b'{"a": 1e999}', "out of range"),
        (b'{"a": ' + b"9" * 5000 + b"}", "more than 20 digits"),
        (b'{"a": -' + b"9" * 21 + b"}", "more than 20 digits"),
        (b'{"a": ' + b"[" * 25 + b"]" * 25 + b"}", "nested deeper than 20"),
        (b'{"a": 1} {"b": 2}', "unexpected data after the JSON value"),
        (b'{"a": 1}x', "unexpected data after the JSON value"),
        (b"[1, 2]", "must be a JSON object, not an array"),
        (b'"text"', "not a string"),
        (b"42", "not a number"),
        (b"null", "not null"),
        (b'{"a": 1', "invalid JSON"),
        (b"{'a': 1}", "invalid JSON"),
        (b'{"a": "line\rbreak"}', "invalid JSON"),  # a raw control character inside a string
        (b'{"id": "x", "source": "no end', "invalid JSON: Unterminated string starting at column 23"),  # not "at at"
    ],
)
def test_it_rejects_a_malformed_line_with_a_line_numbered_reason(line, expected):
    data = b'{"ok": 1}\n' + line + b'\n{"ok": 2}\n'
    found = reasons(data)
    assert list(found) == [2]
    assert expected in found[2]


def test_it_does_not_count_brackets_inside_strings_as_nesting():
    deep_looking = {"text": "[" * 100 + "{" * 100 + '\\"[[' + "]" * 3}
    assert read_jsonl(json.dumps(deep_looking).encode()) == [(1, deep_looking)]


def test_it_refuses_pathological_nesting_without_recursing():
    line = b"[" * 200_000 + b"]" * 200_000
    assert "nested deeper" in reasons(line)[1]


def test_it_accepts_nesting_up_to_the_limit():
    obj: dict = {}
    inner = obj
    for _ in range(19):
        inner["x"] = {}
        inner = inner["x"]
    assert read_jsonl(json.dumps(obj).encode()) == [(1, obj)]


def test_it_accepts_twenty_digit_integers():
    assert read_jsonl(b'{"a": 12345678901234567890}') == [(1, {"a": 12345678901234567890})]


def test_it_accepts_escaped_surrogate_pairs_that_form_a_real_character():
    assert read_jsonl(b'{"a": "\\ud83d\\ude00"}') == [(1, {"a": "\U0001f600"})]


def test_it_rejects_lines_over_the_byte_limit():
    data = b'{"a": "' + b"x" * 100 + b'"}\n{"b": 1}'
    found = reasons(data, max_line_bytes=50)
    assert list(found) == [1]
    assert "the limit is 50" in found[1]


def test_it_rejects_files_with_too_many_lines():
    data = b'{"a": 1}\n' * 11
    found = reasons(data, max_lines=10)
    assert found == {11: "too many lines: the limit is 10"}


def test_it_reports_every_bad_line_not_just_the_first():
    data = b'{"a": 1}\n[1]\n{"ok": true}\n{"a": NaN}\n{"x"\n'
    assert list(reasons(data)) == [2, 4, 5]


def test_it_caps_the_report_and_says_how_many_more():
    data = b"[]\n" * (MAX_REPORTED_ERRORS + 57)
    with pytest.raises(ImportValidationError) as info:
        read_jsonl(data)
    assert len(info.value.errors) == MAX_REPORTED_ERRORS
    assert info.value.more == 57
    assert info.value.total == MAX_REPORTED_ERRORS + 57
    assert "… and 57 more" in str(info.value)


def test_it_explains_itself_in_a_readable_message():
    error = ImportValidationError([LineError(3, "duplicate key 'a'")])
    assert str(error) == "import rejected, 1 error:\n  line 3: duplicate key 'a'"
    assert str(LineError(0, "no article found")) == "document: no article found"


# --- property tests -------------------------------------------------------------

_safe_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)
_scalars = st.none() | st.booleans() | st.integers(-(10**19), 10**19) | st.floats(allow_nan=False, allow_infinity=False)
_json_values = st.recursive(
    _scalars | _safe_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_safe_text, children, max_size=4),
    max_leaves=12,
)
_objects = st.dictionaries(_safe_text, _json_values, max_size=5)


@settings(max_examples=100, database=None, deadline=None)
@given(st.lists(_objects, max_size=3), st.booleans(), st.booleans())
def test_it_round_trips_every_valid_object(objects, ensure_ascii, crlf):
    newline = "\r\n" if crlf else "\n"
    data = newline.join(json.dumps(obj, ensure_ascii=ensure_ascii) for obj in objects).encode()
    if not objects:
        assert read_jsonl(data) == []
        return
    assert [obj for _, obj in read_jsonl(data)] == objects


# Garbage built from the characters and fragments that break lenient readers.
_fragments = st.sampled_from(
    [b"{", b"}", b"[", b"]", b'"', b"\\", b":", b",", b"\r", b"\n", b"\x00", b"\xff", b"\xef\xbb\xbf", b"NaN",
     b"Infinity", b"-", b"1e999", b"9" * 30, b'"a"', b"\\ud800", b"\\u0000", b"true", b"null", b" ", b"\xe5\x88\x91"]
)  # fmt: skip
_garbage_lines = st.lists(st.binary(max_size=40) | _fragments, max_size=30).map(b"".join)


@settings(max_examples=400, database=None, deadline=None)
@given(st.lists(_garbage_lines, max_size=6))
def test_it_never_raises_anything_but_import_validation_error(lines):
    data = b"\n".join(lines)
    try:
        records = read_jsonl(data, max_depth=5)
    except ImportValidationError as error:
        assert error.errors and all(e.line >= 1 for e in error.errors)
    else:
        assert all(isinstance(obj, dict) for _, obj in records)
