"""A small JSON-schema validator for the subset our stage schemas use.

Supported keywords: ``type`` (a name or a list of names, so ``["string",
"null"]`` expresses nullable), ``properties``, ``required``,
``additionalProperties`` (boolean or schema), ``enum``, ``const``, ``items``
(one schema), ``minItems``, ``maxItems``, ``uniqueItems``, ``minimum``,
``maximum``, ``minLength``, ``maxLength``; annotations (``title``,
``description``, ``default``, ``examples``, ``$comment``, ``$schema``) are
ignored.  Any other keyword raises :class:`SchemaError`: a schema that asks
for ``pattern`` or ``anyOf`` must not pass silently unenforced.

Types are strict, stricter than the JSON-schema specification in two places
that matter downstream: ``true`` is never an integer or a number, and ``1.0``
is not an integer (a term of "12.0" months must not reach arithmetic that
expects an int).  Numbers must be finite.  The types are worker/agents/strictjson.py's (the corpus
record validator, lexlib/parsing/records.py, uses the same).
"""

from __future__ import annotations

import math
from typing import Any

from worker.agents.strictjson import JSON_TYPES, json_type, wrong_type

__all__ = ["SchemaError", "check_schema", "is_valid", "minimal_instance", "validate"]

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "$schema"})
_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "enum", "const", "items",
        "minItems", "maxItems", "uniqueItems", "minimum", "maximum", "minLength", "maxLength",
    }
) | _ANNOTATIONS  # fmt: skip

# Errors are reported up to this many per validation, so a hostile reply of a
# million wrong items cannot produce a million messages.
MAX_ERRORS = 50


class SchemaError(ValueError):
    """The schema itself is malformed or uses a keyword this validator does not enforce."""


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: 1 == 1.0, but True != 1 and False != 0."""
    ta, tb = json_type(a), json_type(b)
    numeric = ("integer", "number")
    if ta in numeric and tb in numeric:
        return a == b
    if ta != tb:
        return False
    if ta == "array":
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta == "object":
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return a == b


def check_schema(schema: Any, path: str = "#") -> None:
    """Raise SchemaError unless ``schema`` lies inside the supported subset."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{path}: a schema must be an object, got {json_type(schema)}")
    unknown = sorted(set(schema) - _KEYWORDS)
    if unknown:
        raise SchemaError(f"{path}: unsupported keyword(s) {', '.join(unknown)}")
    if "type" in schema:
        types = schema["type"]
        names = types if isinstance(types, list) else [types]
        if not names or any(t not in JSON_TYPES for t in names) or len(set(names)) != len(names):
            raise SchemaError(f"{path}/type: invalid type {types!r}")
    if "properties" in schema:
        props = schema["properties"]
        if not isinstance(props, dict):
            raise SchemaError(f"{path}/properties: must be an object")
        for key, sub in props.items():
            check_schema(sub, f"{path}/properties/{key}")
    if "required" in schema:
        req = schema["required"]
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req) or len(set(req)) != len(req):
            raise SchemaError(f"{path}/required: must be a list of distinct strings")
    if "additionalProperties" in schema:
        extra = schema["additionalProperties"]
        if not isinstance(extra, bool):
            check_schema(extra, f"{path}/additionalProperties")
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise SchemaError(f"{path}/enum: must be a list")
    if "items" in schema:
        check_schema(schema["items"], f"{path}/items")
    for key in ("minItems", "maxItems", "minLength", "maxLength"):
        if key in schema:
            v = schema[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise SchemaError(f"{path}/{key}: must be a non-negative integer")
    for key in ("minimum", "maximum"):
        if key in schema:
            v = schema[key]
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise SchemaError(f"{path}/{key}: must be a finite number")
    if "uniqueItems" in schema and not isinstance(schema["uniqueItems"], bool):
        raise SchemaError(f"{path}/uniqueItems: must be a boolean")


def validate(instance: Any, schema: dict) -> list[str]:
    """Every way ``instance`` violates ``schema``, as "<path>: <message>" strings.

    An empty list means valid.  Paths look like ``$.charges[1]``.  Raises
    SchemaError if the schema is outside the supported subset.
    """
    check_schema(schema)
    errors: list[str] = []
    _validate(instance, schema, "$", errors)
    return errors[:MAX_ERRORS]


def is_valid(instance: Any, schema: dict) -> bool:
    return not validate(instance, schema)


def _validate(value: Any, schema: dict, path: str, errors: list[str]) -> None:
    if len(errors) >= MAX_ERRORS:
        return
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        got = wrong_type(value, *names)
        if got is not None:
            errors.append(f"{path}: expected {' or '.join(names)}, got {got}")
            return  # further keywords would only repeat the type error
    if "const" in schema and not _json_equal(value, schema["const"]):
        errors.append(f"{path}: must equal {schema['const']!r}")
    if "enum" in schema and not any(_json_equal(value, option) for option in schema["enum"]):
        shown = ", ".join(repr(o) for o in schema["enum"][:10])
        more = ", ..." if len(schema["enum"]) > 10 else ""
        errors.append(f"{path}: {_short(value)} is not one of [{shown}{more}]")

    kind = json_type(value)
    if kind in ("integer", "number"):
        if kind == "number" and not math.isfinite(value):
            errors.append(f"{path}: number must be finite")
        elif "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} is less than the minimum {schema['minimum']}")
        elif "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} is greater than the maximum {schema['maximum']}")
    elif kind == "string":
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
    elif kind == "array":
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        if schema.get("uniqueItems"):
            for i in range(len(value)):
                if any(_json_equal(value[i], value[j]) for j in range(i)):
                    errors.append(f"{path}[{i}]: duplicate item")
                    break
        if "items" in schema:
            for i, item in enumerate(value):
                _validate(item, schema["items"], f"{path}[{i}]", errors)
    elif kind == "object":
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required property {key!r}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub_path = f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"
            if key in props:
                _validate(item, props[key], sub_path, errors)
            elif extra is False:
                errors.append(f"{path}: unexpected property {_short(key)}")
            elif isinstance(extra, dict):
                _validate(item, extra, sub_path, errors)


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def minimal_instance(schema: dict) -> Any:
    """The smallest value that satisfies ``schema`` (required properties only).

    Used by the test stub to answer "ok" for any requested schema, and by
    tests to show every stage schema is satisfiable.  Raises SchemaError when
    no instance can be built (e.g. an empty ``enum``).
    """
    check_schema(schema)
    return _minimal(schema, "#")


def _minimal(schema: dict, path: str, index: int = 0) -> Any:
    """``index``: the position in an enclosing array; an enum starts its search there, so an array
    of objects with an enumerated id (one reply object per offered item) names each id once."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        options = list(schema["enum"])
        if options:
            start = index % len(options)
            options = options[start:] + options[:start]
        for option in options:
            rest = {k: v for k, v in schema.items() if k != "enum"}
            if not validate(option, rest):
                return option
        raise SchemaError(f"{path}: no enum option satisfies the schema")
    types = schema.get("type", "object")
    names = types if isinstance(types, list) else [types]
    kind = names[0]
    if kind == "null":
        return None
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        value: int | float = 0
        if lo is not None and value < lo:
            value = math.ceil(lo) if kind == "integer" else lo
        if hi is not None and value > hi:
            value = math.floor(hi) if kind == "integer" else hi
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise SchemaError(f"{path}: empty numeric range")
        return value
    if kind == "string":
        n = schema.get("minLength", 0)
        if n > schema.get("maxLength", n):
            raise SchemaError(f"{path}: minLength exceeds maxLength")
        return "x" * n
    if kind == "array":
        n = schema.get("minItems", 0)
        if n > schema.get("maxItems", n):
            raise SchemaError(f"{path}: minItems exceeds maxItems")
        if n and schema.get("uniqueItems"):
            raise SchemaError(f"{path}: cannot build {n} distinct minimal items")
        return [_minimal(schema.get("items", {}), f"{path}/items", i) for i in range(n)]
    props = schema.get("properties", {})
    out = {}
    for key in schema.get("required", []):
        if key in props:
            out[key] = _minimal(props[key], f"{path}/properties/{key}", index)
        elif schema.get("additionalProperties", True) is False:
            raise SchemaError(f"{path}: required {key!r} is neither a property nor allowed as extra")
        elif isinstance(schema.get("additionalProperties"), dict):
            out[key] = _minimal(schema["additionalProperties"], f"{path}/additionalProperties")
        else:
            out[key] = None
    return out
