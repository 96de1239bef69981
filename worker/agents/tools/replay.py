"""Replaying a stored evidence bundle, and the stage-by-stage difference of two bundles.

An LLM run is replayed from the replies recorded in its bundle (``llm_records``):
each stage call receives the next recorded reply of that stage, so no model is
called and the Auditor's and Adjudicator's checks run again on today's graph.
A stage asked for more replies than were recorded fails explicitly
(model unavailable: "replay has no recorded reply"), never with an invented one.
A statistical run needs no recording: it is deterministic for the same models.

``bundle_diff`` compares two bundles (typed, or as ``Bundle.to_dict()`` stored them) stage by
stage: what was retrieved, what the Auditor decided per article and per checklist item, and the
judgment.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict, deque
from typing import Any

from worker.agents.llm import LLMResult, ModelOutputInvalid, ModelUnavailable, Usage
from worker.agents.pipeline import Params
from worker.agents.types import ArticleAudit, Bundle, CaseInput


class RecordedReplies:
    """A stand-in for LLMClient that answers each stage from the recorded replies, in order."""

    def __init__(self, llm_records: list[dict], *, model: str = "replay", sampling: dict | None = None):
        self.model = model
        self.usage = Usage()
        self._sampling = sampling or {}
        self._queues: dict[str, deque] = defaultdict(deque)
        for record in llm_records:
            stage = (record.get("prompt") or {}).get("stage", "")
            self._queues[stage].append(record)

    def sampling_params(self) -> dict:
        return dict(self._sampling)

    def complete_json(self, messages, schema, *, name: str, stage: str | None = None) -> LLMResult:
        stage = stage or name
        queue = self._queues.get(stage)
        if not queue:
            self.usage.add(stage, failures=1)
            raise ModelUnavailable(f"replay has no recorded reply for stage {stage}")
        record = queue.popleft()
        if "result" not in record:
            self.usage.add(stage, failures=1)
            raise ModelOutputInvalid(f"recorded failure: {record.get('error', 'unknown')}", raw_text=record.get("raw", ""))
        result = record["result"]
        self.usage.add(stage, results=1, cache_hits=1)
        return LLMResult(value=result["value"], raw_text=result.get("raw_text", ""), prompt_tokens=0, completion_tokens=0,
                         latency_s=0.0, attempts=0, cached=True, model=result.get("model", self.model),
                         request_hash=result.get("request_hash", ""), stage=stage,
                         structured=result.get("structured", "json_schema"))

    def unused(self) -> dict[str, int]:
        """Recorded replies the replay did not ask for, per stage (a sign the run took another path)."""
        return {stage: len(q) for stage, q in self._queues.items() if q}


def case_of(bundle: Bundle | dict) -> CaseInput:
    """The case a stored bundle (typed or as stored) was run on."""
    return Bundle.of(bundle).case


def params_of(bundle: Bundle | dict) -> Params:
    """The pipeline parameters a stored bundle (typed or as stored) was run with."""
    stored = Bundle.of(bundle)
    known = {f.name for f in dataclasses.fields(Params)}
    values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in stored.params.items() if k in known}
    return Params(**values)


def _articles(bundle: Bundle) -> dict[str, ArticleAudit]:
    return {str(a.key): a for a in (bundle.audit.articles if bundle.audit else [])}


def _hits(bundle: Bundle) -> dict[str, list[str]]:
    by_path: dict[str, list[str]] = defaultdict(list)
    for hit in bundle.research.hits if bundle.research else []:
        by_path[hit.path].append(f"{hit.kind}:{hit.pk}")
    return {path: sorted(refs) for path, refs in by_path.items()}


_OUTCOME = ("status", "charges", "article_keys", "term", "citations")


def _outcome(bundle: Bundle) -> dict[str, Any]:
    """The judgment's fields the diff compares, as the bundle stores them (all None without a judgment)."""
    j = bundle.judgment
    if j is None:
        return dict.fromkeys(_OUTCOME)
    return {"status": j.status.value, "charges": list(j.charges), "article_keys": list(j.article_keys),
            "term": dataclasses.asdict(j.term) if j.term is not None else None, "citations": list(j.citations)}


def bundle_diff(before: Bundle | dict, after: Bundle | dict) -> list[dict[str, Any]]:
    """Differences as rows {stage, what, before, after}; empty when the two runs agree."""
    before, after = Bundle.of(before), Bundle.of(after)
    rows: list[dict[str, Any]] = []

    def add(stage: str, what: str, old: Any, new: Any) -> None:
        if old != new:
            rows.append({"stage": stage, "what": what, "before": old, "after": new})

    old_hits, new_hits = _hits(before), _hits(after)
    for path in sorted(set(old_hits) | set(new_hits)):
        add("researcher", f"path {path}", old_hits.get(path, []), new_hits.get(path, []))
    add("researcher", "pre-judged charges", [c for c, _ in (before.research.prejudged if before.research else [])],
        [c for c, _ in (after.research.prejudged if after.research else [])])
    old_arts, new_arts = _articles(before), _articles(after)
    for key in sorted(set(old_arts) | set(new_arts)):
        old, new = old_arts.get(key), new_arts.get(key)
        if old is None or new is None:
            add("auditor", f"article {key}", "audited" if old else "not a candidate", "audited" if new else "not a candidate")
            continue
        add("auditor", f"article {key} decision", old.passed, new.passed)
        add("auditor", f"article {key} version", old.version_pk, new.version_pk)
        old_items = {i.item_pk: i for i in old.items}
        new_items = {i.item_pk: i for i in new.items}
        for pk in sorted(set(old_items) | set(new_items)):
            o, n = old_items.get(pk), new_items.get(pk)
            question = (o or n).question
            add("auditor", f"article {key} item “{question}”", o.satisfied if o else None, n.satisfied if n else None)
    old_j, new_j = _outcome(before), _outcome(after)
    for field in _OUTCOME:
        add("adjudicator", field, old_j[field], new_j[field])
    return rows
