"""JSON schemas of the stage outputs, and their narrowing to one call's data.

The schemas stay inside what vLLM's guided decoding, llama.cpp's grammar
conversion and our own validator all understand: type, properties, required,
additionalProperties false, enum, items, minItems/maxItems, minimum/maximum.
Every property is required and every object closed, as OpenAI "strict" mode
expects.  Strings carry at most ``minLength: 1`` (no long repetition bounds, which
blow up grammars); ``max_tokens`` bounds the reply instead.

``adjudicate`` requires at least one act, charge and article: the pipeline
calls it only with a non-empty verified set, and a case in which the auditor
verified nothing is decided without the model, never by an empty reply.

``narrow(stage, ...)`` replaces open identifier fields by enums of the ids
actually offered in the prompt (candidate precedents, communities, checklist
items, verified articles), so a constrained decoder cannot even write an id
it was not given.  The domain verifier must still check them: a server without
structured output, or a stored reply, is not constrained.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence

from worker.agents.graph_types import DIMENSIONS

# Fixed-term punishments combined for several crimes stop at 25 years.
MAX_TERM_MONTHS = 300


def _obj(**props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _str(min_length: int = 0) -> dict:
    return {"type": "string", "minLength": min_length} if min_length else {"type": "string"}


def _list(items: dict, max_items: int | None = None, min_items: int = 0) -> dict:
    out: dict = {"type": "array", "items": items}
    if min_items:
        out["minItems"] = min_items
    if max_items is not None:
        out["maxItems"] = max_items
    return out


TERM_SCHEMA = _obj(
    months={"type": "integer", "minimum": 0, "maximum": MAX_TERM_MONTHS},
    life={"type": "boolean"},
    death={"type": "boolean"},
)

# One checklist verdict, compact: met or not, a short reason, and the opening words of the supporting
# sentence of the facts (the strategy finds them in the facts and takes the whole sentence).
_VERDICT = {"met": {"type": "boolean"}, "why": _str(), "span": _str()}

SCHEMAS: dict[str, dict] = {
    "focus": _obj(facts=_str(1)),
    "features": _obj(**{dim: _list(_str(), max_items=8) for dim in DIMENSIONS}),
    "rerank_cases": _obj(selected=_list({"type": "integer"}, max_items=3), reasoning=_str()),
    "pick_community": _obj(community={"type": "integer"}, reasoning=_str()),
    "predict_charges": _obj(charges=_list(_str(1), max_items=3), reasoning=_str()),
    "checklist_item": _obj(**_VERDICT),
    "checklist_article": _obj(items=_list(_obj(id={"type": "integer"}, **_VERDICT), min_items=1)),
    "article_decision": _obj(applies={"type": "boolean"}, reasoning=_str()),
    "checklist_batch": _obj(items=_list(_obj(id={"type": "integer"}, **_VERDICT), min_items=1)),
    "articles_decision": _obj(articles=_list(_obj(key=_str(1), applies={"type": "boolean"}, reasoning=_str()), min_items=1)),
    "adjudicate": _obj(
        acts=_list(_obj(description=_str(1), articles=_list(_str(1), min_items=1)), min_items=1),
        charges=_list(_str(1), min_items=1),
        articles=_list(_str(1), min_items=1),
        term=TERM_SCHEMA,
        reasoning=_str(1),
    ),
}

STAGES: tuple[str, ...] = tuple(SCHEMAS)


def _enum(values: Iterable, kind: str) -> dict:
    options = list(dict.fromkeys(values))  # keep order, drop duplicates
    return {"type": kind, "enum": options}


def _ids(records: Sequence, label: str) -> list[int]:
    ids = []
    for r in records:
        value = r.get("id") if hasattr(r, "get") else None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"every {label} needs an integer 'id'")
        ids.append(value)
    if len(set(ids)) != len(ids):
        raise ValueError(f"{label} ids must be distinct")
    return ids


def narrow(
    stage: str,
    *,
    candidates: Sequence = (),
    communities: Sequence = (),
    charge_vocabulary: Sequence[str] | None = None,
    items: Sequence = (),
    article_keys: Sequence[str] | None = None,
) -> dict:
    """The stage schema restricted to the ids this call offers (a fresh copy)."""
    schema = copy.deepcopy(SCHEMAS[stage])
    props = schema["properties"]
    if stage == "rerank_cases":
        ids = _ids(candidates, "candidate")
        if ids:
            props["selected"]["items"] = _enum(ids, "integer")
        else:
            props["selected"]["maxItems"] = 0
    elif stage == "pick_community":
        ids = _ids(communities, "community")
        if not ids:
            raise ValueError("pick_community needs at least one community")
        props["community"] = _enum(ids, "integer")
    elif stage == "predict_charges" and charge_vocabulary:
        props["charges"]["items"] = _enum(charge_vocabulary, "string")
    elif stage == "checklist_article":
        ids = _ids(items, "checklist item")
        if not ids:
            raise ValueError("checklist_article needs at least one item")
        props["items"]["items"]["properties"]["id"] = _enum(ids, "integer")
        props["items"]["minItems"] = props["items"]["maxItems"] = len(ids)
    elif stage == "checklist_batch":
        # Several articles in one call, every item answered (a constrained decoder writes them all; a
        # server without structured output may leave some out: LLMStrategy asks those on their own).
        ids = _ids(items, "checklist item")
        if not ids:
            raise ValueError("checklist_batch needs at least one item")
        props["items"]["items"]["properties"]["id"] = _enum(ids, "integer")
        props["items"]["minItems"] = props["items"]["maxItems"] = len(ids)
    elif stage == "articles_decision":
        keys = [str(k) for k in article_keys or ()]
        if not keys:
            raise ValueError("articles_decision needs at least one article")
        props["articles"]["items"]["properties"]["key"] = _enum(keys, "string")
        props["articles"]["minItems"] = props["articles"]["maxItems"] = len(keys)
    elif stage == "adjudicate":
        if article_keys is not None:
            keys = [str(k) for k in article_keys]
            if not keys:
                raise ValueError("adjudicate needs at least one verified article")
            props["articles"]["items"] = _enum(keys, "string")
            props["acts"]["items"]["properties"]["articles"]["items"] = _enum(keys, "string")
        if charge_vocabulary:
            props["charges"]["items"] = _enum(charge_vocabulary, "string")
    return schema
