"""Versioned prompt templates for the LLM strategy of every pipeline stage.

``build_prompt(stage, lang, facts=..., defendant=..., **data)`` returns a
:class:`Prompt` whose ``messages`` go to ``LLMClient.complete_json`` together
with its ``schema`` and ``name``.

Message layout, chosen so that every call for one (case, defendant) shares
the longest possible prefix (vLLM and llama.cpp reuse a cached prefix):

1. ``system``: the role and the rules, identical for every stage of a language;
2. ``user``: the case block (defendant + facts data blocks, identical for
   every stage of one case and defendant), then the stage instructions, then
   the stage data blocks.

All untrusted text sits inside data blocks (see :mod:`.blocks`); instruction
text is ours alone and contains no data.

Compact by design (every call is paid per token): a checklist item is shown as
``{"<id>": "<question>"}``, an article by its label and text, each judicial
interpretation once per call and cut to the passage that bears on the articles
it is shown for (:mod:`.passages`), and a verdict is answered as
``{"id", "met", "why", "span"}`` where ``span`` is the opening words of the
supporting sentence of the facts, not the sentence itself.

Evidence numbering for ``adjudicate``: ``evidence[i]`` is shown as ``n = i + 1``
and the model must cite it as ``[n]`` in ``reasoning``; use
:func:`extract_citations` to read them back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from worker.agents.prompts import en, zh
from worker.agents.prompts.blocks import data_block, json_line, json_lines, sanitize_data
from worker.agents.prompts.passages import article_ref, interpretation_passage
from worker.agents.prompts.schemas import MAX_TERM_MONTHS, SCHEMAS, STAGES, narrow

# Bump on any change of wording, layout or schema: it is stored with every
# judgment and enters the evidence-bundle hash.
PROMPT_VERSION = "lextrace-prompts/2026-12.3"
LANGS: tuple[str, ...] = ("zh", "en")
_TEXTS: dict[str, ModuleType] = {"zh": zh, "en": en}
EVIDENCE_KINDS = ("article", "interpretation", "checklist", "precedent", "fact")


@dataclass(frozen=True)
class Prompt:
    stage: str
    lang: str
    messages: list[dict[str, str]]
    schema: dict
    name: str  # the schema name for response_format, also the usage stage key
    version: str = PROMPT_VERSION
    template_hash: str = ""

    def record(self) -> dict[str, Any]:
        """What the evidence bundle stores about the prompt."""
        return {"stage": self.stage, "lang": self.lang, "version": self.version, "template_hash": self.template_hash}


def _texts(lang: str) -> ModuleType:
    try:
        return _TEXTS[lang]
    except KeyError:
        raise ValueError(f"unknown prompt language {lang!r}; use one of {LANGS}") from None


def _check_stage(stage: str) -> None:
    if stage not in SCHEMAS:
        raise ValueError(f"unknown stage {stage!r}; use one of {STAGES}")


def prompt_hash(stage: str, lang: str) -> str:
    """sha256 of everything fixed in a stage's prompt: version, texts and schema."""
    _check_stage(stage)
    t = _texts(lang)
    material = {
        "version": PROMPT_VERSION,
        "stage": stage,
        "lang": lang,
        "system": t.SYSTEM,
        "case_intro": t.CASE_INTRO,
        "no_defendant": t.NO_DEFENDANT,
        "task_header": t.TASK_HEADER,
        "labels": t.BLOCK_LABELS,
        "instructions": t.INSTRUCTIONS[stage],
        "charges_restricted": t.CHARGES_RESTRICTED,
        "schema": SCHEMAS[stage],
    }
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def system_message(lang: str) -> dict[str, str]:
    return {"role": "system", "content": _texts(lang).SYSTEM}


def case_block(lang: str, *, facts: str, defendant: str = "") -> str:
    """The shared head of every user message for one case and defendant."""
    t = _texts(lang)
    if not isinstance(facts, str) or not facts.strip():
        raise ValueError("facts must be non-empty text")
    who = defendant.strip() if isinstance(defendant, str) else ""
    return "\n".join(
        [
            t.CASE_INTRO,
            t.BLOCK_LABELS["DEFENDANT"],
            data_block("DEFENDANT", who or t.NO_DEFENDANT),
            t.BLOCK_LABELS["FACTS"],
            data_block("FACTS", facts),
        ]
    )


def _labelled(t: ModuleType, name: str, content: str) -> str:
    return t.BLOCK_LABELS[name] + "\n" + data_block(name, content)


def _article_record(article: Mapping) -> dict:
    if not isinstance(article, Mapping) or "key" not in article or "text" not in article:
        raise ValueError("an article needs at least 'key' and 'text'")
    return {"key": str(article["key"]), "label": str(article.get("label", "")), "text": article["text"]}


def _shown_article(record: dict) -> dict:
    """An article as a checklist prompt shows it: its label (the key when it has none) and its text."""
    return {"label": record["label"] or record["key"], "text": record["text"]}


def _interpretation_record(source: str, text: str) -> dict:
    return {"source": source, "text": text} if source else {"text": text}


def _interpretation_records(interpretations: Sequence, article_key: str) -> list[dict]:
    """The interpretations of one article, each cut to its passage about that article (one that does
    not bear on it is left out)."""
    ref = article_ref(article_key)
    out = []
    for i in interpretations:
        if isinstance(i, str):
            source, text = "", i
        elif isinstance(i, Mapping) and "text" in i:
            source, text = str(i.get("source", "")), i["text"]
        else:
            raise ValueError("an interpretation is text or a mapping with 'text'")
        passage = interpretation_passage(text, [ref] if ref else [])
        if passage is not None:
            out.append(_interpretation_record(source, passage))
    return out


def _item_record(item: Mapping) -> dict:
    if not isinstance(item, Mapping) or "id" not in item or "question" not in item:
        raise ValueError("a checklist item needs 'id' and 'question'")
    out = {"id": item["id"], "question": item["question"]}
    if item.get("reasoning"):
        out["reasoning"] = item["reasoning"]
    return out


def _item_map(items: Sequence[Mapping]) -> tuple[list[dict], dict[str, str]]:
    """Checklist items as checked (id and question) and as shown: {"<id>": "<question>"}."""
    records = [_item_record(i) for i in items]
    return records, {str(r["id"]): r["question"] for r in records}


def _decided_item(item: Mapping) -> str:
    """An item already judged, as the decision stages show it: its question (and the reason, if given)."""
    record = _item_record(item)
    return record["question"] + ("：" + record["reasoning"] if "reasoning" in record else "")


def _batch_articles(articles: Sequence, *, decided: bool) -> tuple[list[dict], list[dict]]:
    """(the articles as given, their records as shown). A checklist shows an article by its label,
    text, interpretation ids and items {"<id>": "<question>"}; a decision also by its key, which the
    reply names, with the questions of the items judged satisfied and failed."""
    given, shown = [], []
    for a in articles:
        record = _article_record(a)
        record["interpretations"] = [int(i) for i in a.get("interpretations", ())]
        view: dict = dict(record) if decided else _shown_article(record)
        view["interpretations"] = record["interpretations"]
        if decided:
            view["satisfied"] = [_decided_item(i) for i in a.get("satisfied", ())]
            view["failed"] = [_decided_item(i) for i in a.get("failed", ())]
        else:
            record["items"], view["items"] = _item_map(a.get("items", ()))
            if not record["items"]:
                raise ValueError(f"article {record['key']} has no checklist item to decide")
        given.append(record)
        shown.append(view)
    if len({r["key"] for r in given}) != len(given):
        raise ValueError("article keys must be distinct")
    return given, shown


def _interpretation_list(interpretations: Sequence[Mapping], given: list[dict], shown: list[dict]) -> list[dict]:
    """Interpretations shown once per call, each with an id the articles refer to, cut to the passage
    that bears on the articles referring to it; one that bears on none of them is left out (and its
    id taken out of their lists)."""
    out = []
    for i in interpretations:
        if not isinstance(i, Mapping) or "id" not in i or "text" not in i:
            raise ValueError("a listed interpretation needs 'id' and 'text'")
        pk = int(i["id"])
        refs = [article_ref(a["key"]) for a in given if pk in a["interpretations"]]
        passage = interpretation_passage(i["text"], [r for r in refs if r] if all(refs) else [])
        if passage is None:
            for view in shown:
                view["interpretations"] = [x for x in view["interpretations"] if x != pk]
            continue
        out.append({"id": pk, **_interpretation_record(str(i.get("source", "")), passage)})
    return out


def evidence_records(evidence: Sequence[Mapping]) -> list[dict]:
    """The evidence list as shown to the adjudicator: ``n`` is position + 1. An interpretation (its
    ``ref`` is the article it is evidence for) is cut to its passage about that article; one with no
    such passage stays whole, as numbered evidence is never left out."""
    out = []
    for n, e in enumerate(evidence, start=1):
        if not isinstance(e, Mapping) or e.get("kind") not in EVIDENCE_KINDS or "text" not in e:
            raise ValueError(f"evidence {n}: needs kind in {EVIDENCE_KINDS} and text")
        ref, text = str(e.get("ref", "")), e["text"]
        if e["kind"] == "interpretation" and isinstance(text, str):
            article = article_ref(ref)
            text = (interpretation_passage(text, [article]) if article else None) or text
        out.append({"n": n, "kind": e["kind"], "ref": ref, "text": text})
    return out


def _stage_data(stage: str, t: ModuleType, data: dict[str, Any]) -> tuple[list[str], dict]:
    """Rendered data sections and the narrowed schema for one stage."""
    sections: list[str] = []
    extra_rules: list[str] = []
    narrow_args: dict[str, Any] = {}

    def take(key: str, default: Any = None, required: bool = False) -> Any:
        if key not in data:
            if required:
                raise ValueError(f"stage {stage!r} needs {key!r}")
            return default
        return data.pop(key)

    if stage == "focus":
        sections.append(_labelled(t, "DEFENDANTS", json_lines([str(d) for d in take("defendants", ())])))
    elif stage == "rerank_cases":
        candidates = list(take("candidates", required=True))
        narrow_args["candidates"] = candidates
        records = [
            {"id": c["id"], "charges": list(c.get("charges", ())), "articles": [str(a) for a in c.get("articles", ())],
             "facts": c.get("facts", c.get("summary", ""))}
            for c in candidates
        ]  # fmt: skip
        sections.append(_labelled(t, "CASES", json_lines(records)))
    elif stage == "pick_community":
        communities = list(take("communities", required=True))
        narrow_args["communities"] = communities
        records = [
            {"id": c["id"], "summary": c.get("summary", ""), "top_charges": list(c.get("top_charges", ()))}
            for c in communities
        ]
        sections.append(_labelled(t, "COMMUNITIES", json_lines(records)))
    elif stage == "predict_charges":
        vocabulary = take("charges")
        if vocabulary:
            narrow_args["charge_vocabulary"] = [str(c) for c in vocabulary]
            extra_rules.append(t.CHARGES_RESTRICTED)
            sections.append(_labelled(t, "CHARGES", json_lines(narrow_args["charge_vocabulary"])))
    elif stage in ("checklist_item", "checklist_article", "article_decision"):
        article = _article_record(take("article", required=True))
        sections.append(_labelled(t, "ARTICLE", json_line(_shown_article(article))))
        interpretations = _interpretation_records(take("interpretations", ()), article["key"])
        sections.append(_labelled(t, "INTERPRETATIONS", json_lines(interpretations)))
        if stage == "checklist_item":
            item = _item_record(take("item", required=True))
            sections.append(_labelled(t, "ITEM", json_line({"question": item["question"]})))
        elif stage == "checklist_article":
            narrow_args["items"], items = _item_map(take("items", required=True))
            sections.append(_labelled(t, "ITEMS", json_line(items)))
        else:
            sections.append(_labelled(t, "SATISFIED", json_lines([_decided_item(i) for i in take("satisfied", ())])))
            sections.append(_labelled(t, "FAILED", json_lines([_decided_item(i) for i in take("failed", ())])))
    elif stage in ("checklist_batch", "articles_decision"):
        given, shown = _batch_articles(take("articles", required=True), decided=stage == "articles_decision")
        listed = _interpretation_list(take("interpretations", ()), given, shown)
        sections.append(_labelled(t, "ARTICLES", json_lines(shown)))
        sections.append(_labelled(t, "INTERPRETATION_LIST", json_lines(listed)))
        if stage == "checklist_batch":
            narrow_args["items"] = [i for a in given for i in a["items"]]
        else:
            narrow_args["article_keys"] = [a["key"] for a in given]
    elif stage == "adjudicate":
        records = evidence_records(take("evidence", required=True))
        if not records:
            raise ValueError("adjudicate needs a non-empty evidence list")
        keys = take("article_keys")
        if keys is None:
            keys = [r["ref"] for r in records if r["kind"] == "article"]
        narrow_args["article_keys"] = [str(k) for k in keys]
        vocabulary = take("charges")
        if vocabulary:
            narrow_args["charge_vocabulary"] = [str(c) for c in vocabulary]
            extra_rules.append(t.CHARGES_RESTRICTED)
            sections.append(_labelled(t, "CHARGES", json_lines(narrow_args["charge_vocabulary"])))
        sections.append(_labelled(t, "EVIDENCE", json_lines(records)))
    if data:
        raise ValueError(f"stage {stage!r} does not take {sorted(data)}")
    return [*extra_rules, *sections], narrow(stage, **narrow_args)


def build_prompt(stage: str, lang: str = "zh", *, facts: str, defendant: str = "", **data: Any) -> Prompt:
    """Messages and schema for one stage call.

    Stage data (keyword arguments):

    - ``focus``: ``defendants`` (all names in the case, optional)
    - ``features``: none (pass the focused facts as ``facts``)
    - ``rerank_cases``: ``candidates`` [{id:int, facts|summary, charges, articles}]
    - ``pick_community``: ``communities`` [{id:int, summary, top_charges}]
    - ``predict_charges``: ``charges`` (optional vocabulary to choose from)
    - ``checklist_item``: ``article`` {key, label, text}, ``interpretations``
      [text | {source, text}], ``item`` {id:int, question}
    - ``checklist_article``: ``article``, ``interpretations``, ``items`` [{id, question}]
    - ``article_decision``: ``article``, ``interpretations``, ``satisfied`` and
      ``failed`` [{id, question, reasoning?}]
    - ``checklist_batch``: several articles in one call: ``articles`` [{key, label, text,
      interpretations: [id], items: [{id, question}]}], ``interpretations`` [{id, source, text}]
      (each shown once)
    - ``articles_decision``: ``articles`` [{key, label, text, interpretations, satisfied, failed}],
      ``interpretations`` [{id, source, text}]
    - ``adjudicate``: ``evidence`` [{kind, ref, text}] numbered from 1,
      ``article_keys`` (default: refs of kind "article"), ``charges`` (optional vocabulary)

    Interpretations are cut to their passage about the article(s) they are given for
    (:mod:`.passages`; an article key that is not a number leaves them whole).
    """
    _check_stage(stage)
    t = _texts(lang)
    head = case_block(lang, facts=facts, defendant=defendant)
    rest, schema = _stage_data(stage, t, dict(data))
    user = "\n\n".join([head, t.TASK_HEADER + "\n" + t.INSTRUCTIONS[stage], *rest])
    return Prompt(
        stage=stage,
        lang=lang,
        messages=[system_message(lang), {"role": "user", "content": user}],
        schema=schema,
        name=stage,
        template_hash=prompt_hash(stage, lang),
    )


def build_messages(stage: str, lang: str = "zh", *, facts: str, defendant: str = "", **data: Any) -> list[dict]:
    return build_prompt(stage, lang, facts=facts, defendant=defendant, **data).messages


# [n] in ASCII, full-width or lenticular brackets: a citation written in any of
# them is read, so no form escapes verification.
_BRACKET_RE = re.compile(r"[\[［【]([^\[\]［］【】\n]{0,24})[\]］】]")
_NUMBER_RE = re.compile(r"^\s*([0-9０-９]+)\s*$")
_DIGIT_RE = re.compile(r"[0-9０-９]")


def extract_citations(text: str) -> tuple[list[int], list[str]]:
    """The evidence numbers cited in ``text`` (in order, repeats kept) and the
    bracketed groups that hold digits but are not a single ``[n]`` (e.g.
    ``[1,2]``, ``[第3条]``): the verifier should treat those as failures.
    """
    numbers: list[int] = []
    malformed: list[str] = []
    for m in _BRACKET_RE.finditer(text or ""):
        inner = m.group(1)
        num = _NUMBER_RE.match(inner)
        if num:
            numbers.append(int(num.group(1)))
        elif _DIGIT_RE.search(inner):
            malformed.append(m.group(0))
    return numbers, malformed


__all__ = [
    "EVIDENCE_KINDS",
    "LANGS",
    "MAX_TERM_MONTHS",
    "PROMPT_VERSION",
    "SCHEMAS",
    "STAGES",
    "Prompt",
    "build_messages",
    "build_prompt",
    "case_block",
    "data_block",
    "evidence_records",
    "extract_citations",
    "narrow",
    "prompt_hash",
    "sanitize_data",
    "system_message",
]
