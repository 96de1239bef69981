"""The one strict-JSON implementation (worker/agents/strictjson.py) that the importers' reader
(lexlib/parsing/jsonl.py) and the LLM client (worker/agents/llm/jsonparse.py) word in their own
messages, and the one notion of JSON types of the record validator and the stage schemas."""

import re

import pytest

from lexlib.parsing.jsonl import read_jsonl_partial
from worker.agents import strictjson
from worker.agents.llm.errors import JSONParseError
from worker.agents.llm.jsonparse import parse_json_strict


@pytest.mark.parametrize(("text", "kind", "value"), [
    ('{"a": 1, "b": {"c": 1, "c": 2}}', "duplicate_key", "c"),
    ('{"a": NaN}', "constant", "NaN"),
    ('[-Infinity]', "constant", "-Infinity"),
])  # fmt: skip
def test_loads_refuses_duplicate_keys_and_the_non_json_constants(text, kind, value):
    with pytest.raises(strictjson.NotStrict) as info:
        strictjson.loads(text)
    assert (info.value.kind, info.value.value) == (kind, value)


def test_check_strings_names_the_first_forbidden_character_and_its_string():
    with pytest.raises(strictjson.NotStrict) as info:
        strictjson.check_strings({"ok": ["fine", {"k\ud800x\x00": 1}]})
    assert (info.value.kind, info.value.value, info.value.string) == ("character", "\ud800", "k\ud800x\x00")
    strictjson.check_strings({"a": ["b", 1, None, {"c": "三"}]})


def test_both_callers_refuse_the_same_texts_in_their_own_words():
    for text, importer, client in [('{"a": 1, "a": 2}', "duplicate key 'a'", "duplicate key 'a'"),
                                   ('{"a": NaN}', "NaN is not valid JSON", "NaN is not JSON"),
                                   ('{"a": "\\ud800"}', "lone surrogate \\ud800 in a string", "lone surrogate in a string"),
                                   ('{"a": "\\u0000"}', "NUL character (\\u0000) in a string", "NUL character in a string")]:
        _records, errors = read_jsonl_partial(text.encode())
        assert [e.reason for e in errors.errors] == [importer]
        with pytest.raises(JSONParseError, match="^" + re.escape(client) + "$"):
            parse_json_strict(text)


@pytest.mark.parametrize(("value", "kind"), [
    (None, "null"), (True, "boolean"), (0, "integer"), (1.0, "number"), ("", "string"), ([], "array"), ({}, "object"),
    ((1,), "tuple"),
])  # fmt: skip
def test_json_types(value, kind):
    assert strictjson.json_type(value) == kind


def test_types_are_strict():
    assert not strictjson.has_json_type(True, "integer") and not strictjson.has_json_type(True, "number")
    assert not strictjson.has_json_type(1.0, "integer") and strictjson.has_json_type(1, "number")
    assert not strictjson.has_json_type(float("inf"), "number") and not strictjson.has_json_type(float("nan"), "number")
    assert strictjson.wrong_type("x", "integer", "string") is None and strictjson.wrong_type(2.5, "integer") == "number"
