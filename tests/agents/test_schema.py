"""The JSON-schema subset validator that guards every model reply."""

import pytest

from worker.agents.llm.schema import SchemaError, check_schema, is_valid, minimal_instance, validate

TERM = {
    "type": "object",
    "properties": {
        "months": {"type": "integer", "minimum": 0, "maximum": 300},
        "life": {"type": "boolean"},
        "death": {"type": "boolean"},
    },
    "required": ["months", "life", "death"],
    "additionalProperties": False,
}

JUDGMENT = {
    "type": "object",
    "properties": {
        "charges": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 3},
        "articles": {"type": "array", "items": {"type": "string", "enum": ["264", "266"]}},
        "term": TERM,
        "note": {"type": ["string", "null"]},
    },
    "required": ["charges", "articles", "term", "note"],
    "additionalProperties": False,
}

GOOD = {
    "charges": ["盗窃罪"],
    "articles": ["264"],
    "term": {"months": 12, "life": False, "death": False},
    "note": None,
}


def test_it_accepts_a_valid_instance():
    assert validate(GOOD, JUDGMENT) == []
    assert validate({**GOOD, "note": "附带说明"}, JUDGMENT) == []


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"charges": []}, "$.charges: fewer than 1 items"),
        ({"charges": ["a", "b", "c", "d"]}, "$.charges: more than 3 items"),
        ({"charges": [""]}, "$.charges[0]: shorter than 1"),
        ({"charges": [1]}, "$.charges[0]: expected string, got integer"),
        ({"articles": ["999"]}, "$.articles[0]: '999' is not one of"),
        ({"term": {"months": -1, "life": False, "death": False}}, "$.term.months: -1 is less than the minimum 0"),
        ({"term": {"months": 301, "life": False, "death": False}}, "greater than the maximum 300"),
        ({"term": {"months": 12, "life": False}}, "$.term: missing required property 'death'"),
        ({"term": {"months": 12, "life": False, "death": False, "x": 1}}, "$.term: unexpected property 'x'"),
        ({"note": 5}, "$.note: expected string or null, got integer"),
        ({"extra": True}, "$: unexpected property 'extra'"),
    ],
)
def test_it_reports_the_path_of_each_violation(change, fragment):
    errors = validate({**GOOD, **change}, JUDGMENT)
    assert any(fragment in e for e in errors), errors


def test_booleans_are_not_numbers_and_floats_are_not_integers():
    assert validate(True, {"type": "integer"})
    assert validate(False, {"type": "number"})
    assert validate(12.0, {"type": "integer"})
    assert validate(12.5, {"type": "number"}) == []
    assert validate(3, {"type": "number"}) == []
    assert validate(1, {"type": "boolean"})


def test_enum_compares_as_json():
    assert validate(1, {"enum": [True]})
    assert validate(True, {"enum": [1]})
    assert validate(1.0, {"enum": [1]}) == []
    assert validate({"a": [1]}, {"enum": [{"a": [1]}]}) == []


def test_const_and_unique_items():
    assert validate("x", {"const": "x"}) == []
    assert validate("y", {"const": "x"})
    assert validate([1, 2, 1], {"type": "array", "uniqueItems": True})
    assert validate([1, 2], {"type": "array", "uniqueItems": True}) == []


def test_additional_properties_may_be_a_schema():
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert validate({"a": 1, "b": 2}, schema) == []
    assert validate({"a": "x"}, schema) == ["$.a: expected integer, got string"]


def test_a_key_that_is_not_an_identifier_is_quoted_in_the_path():
    schema = {"type": "object", "properties": {"a b": {"type": "integer"}, "第1项": {"type": "integer"}}}
    assert validate({"a b": "x", "第1项": "y"}, schema) == [
        "$['a b']: expected integer, got string",
        "$.第1项: expected integer, got string",
    ]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a$"},
        {"anyOf": [{"type": "string"}]},
        {"type": "strng"},
        {"type": []},
        {"type": "object", "properties": {"a": {"format": "date"}}},
        {"type": "array", "items": [{"type": "string"}]},
        {"type": "array", "minItems": -1},
        {"type": "integer", "maximum": True},
        {"required": "a"},
        "not a schema",
    ],
)
def test_unsupported_or_malformed_schemas_raise(schema):
    with pytest.raises(SchemaError):
        validate("x", schema)


def test_annotations_are_allowed():
    check_schema({"type": "string", "title": "t", "description": "d", "default": "", "$comment": "c"})


def test_errors_are_bounded():
    schema = {"type": "array", "items": {"type": "integer"}}
    assert len(validate(["x"] * 10_000, schema)) == 50


def test_minimal_instances_are_valid():
    value = minimal_instance(JUDGMENT)
    assert is_valid(value, JUDGMENT)
    assert value["charges"] == ["x"]
    assert value["articles"] == []
    assert value["term"] == {"months": 0, "life": False, "death": False}
    assert minimal_instance({"type": "integer", "minimum": 3}) == 3
    assert minimal_instance({"type": "integer", "maximum": -2}) == -2
    assert minimal_instance({"type": ["null", "string"]}) is None
    # An array names each enumerated option in turn: one reply object per offered id.
    assert minimal_instance({"type": "array", "items": {"enum": [5, 6]}, "minItems": 2}) == [5, 6]
    ids = {"type": "object", "properties": {"id": {"enum": [7, 8, 9]}}, "required": ["id"], "additionalProperties": False}
    assert minimal_instance({"type": "array", "items": ids, "minItems": 3}) == [{"id": 7}, {"id": 8}, {"id": 9}]


@pytest.mark.parametrize(
    "schema",
    [
        {"enum": []},
        {"type": "integer", "minimum": 5, "maximum": 4},
        {"type": "array", "minItems": 2, "maxItems": 1},
        {"type": "object", "required": ["a"], "additionalProperties": False},
    ],
)
def test_unsatisfiable_schemas_have_no_minimal_instance(schema):
    with pytest.raises(SchemaError):
        minimal_instance(schema)
