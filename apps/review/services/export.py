"""Supervised fine-tuning data from reviewer-approved runs, with the reviewer's overrides applied.

Per defendant of every run with a valid approval, the evidence as approved (the what-if bundle
when the reviewer overrode something, else the run's own) gives:

- one ``checklist_article`` example per audited article: the product's own prompt, and as the
  answer the verdicts as approved (a reviewer's override replaces the Auditor's verdict);
- one ``adjudicate`` example when the approved outcome is a judgment: the verified evidence in
  the prompt, the judgment (charges, articles, term, reasoning with [n] citations) as the answer.

The prompt carries the evidence and facts; training/lora_sft.py masks evidence out of the loss.
Cases whose facts share a 20-character n-gram with an evaluation set are dropped
(training/sft_export.py's filter, court boilerplate ignored).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from apps.cases.models import DefendantResult
from apps.review.models import WhatIf
from apps.review.selectors import approved_results_query
from lexlib.contamination import boilerplate, contamination_index, is_contaminated
from worker.agents.graph_types import Term
from worker.agents.prompts import PROMPT_VERSION, build_prompt
from worker.agents.types import Bundle


def approved_results() -> Iterator[tuple[DefendantResult, dict]]:
    """(result, approved bundle) of every defendant of every run whose current approval is valid."""
    results = approved_results_query().select_related("run", "run__review")
    for result in results.iterator():
        review = result.run.review
        whatif = WhatIf.objects.filter(review=review, version=review.version, result=result).first()
        yield result, (whatif.bundle if whatif and whatif.bundle else result.bundle)


# The checklist prompts ask for the first 8 to 15 characters of the supporting sentence.
SPAN_CHARS = 15


def _assistant(answer: dict) -> dict:
    return {"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)}


def approved_examples(bundle: Bundle, *, lang: str = "zh") -> list[dict]:
    focus = (bundle.research.focus if bundle.research else "") or bundle.case.facts
    defendant = bundle.defendant
    out = []
    for a in bundle.audit.articles if bundle.audit else []:
        if not a.items or not a.in_force:
            continue
        prompt = build_prompt("checklist_article", lang, facts=focus, defendant=defendant,
                              article={"key": a.key, "label": a.label, "text": a.text},
                              interpretations=a.interpretation_texts,
                              items=[{"id": i.item_pk, "question": i.question} for i in a.items])
        # The product's compact verdict: the opening words of the supporting sentence stand for it.
        answer = {"items": [{"id": i.item_pk, "met": bool(i.satisfied), "why": i.reasoning,
                             "span": i.span_text[:SPAN_CHARS] if i.satisfied else ""} for i in a.items]}
        out.append({"stage": "checklist_article", "messages": prompt.messages + [_assistant(answer)]})
    judgment = bundle.judgment
    if judgment and judgment.status == "judged" and judgment.evidence:
        prompt = build_prompt("adjudicate", lang, facts=focus, defendant=defendant,
                              evidence=[{"kind": e.kind, "ref": e.ref, "text": e.text} for e in judgment.evidence])
        term = judgment.term or Term()
        answer = {"acts": [{"description": "、".join(judgment.charges), "articles": list(judgment.article_keys)}],
                  "charges": list(judgment.charges), "articles": list(judgment.article_keys),
                  "term": {"months": int(term.months or 0), "life": bool(term.life), "death": bool(term.death)},
                  "reasoning": judgment.reasoning}
        out.append({"stage": "adjudicate", "messages": prompt.messages + [_assistant(answer)]})
    return out


def approved_sft_export(*, out: Path, exclude: list[Path] = (), ngram: int = 20, boilerplate_max: int = 2,
                        lang: str = "zh") -> dict:
    def facts_of(path: Path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)["fact"]

    index = contamination_index((f for path in exclude for f in facts_of(path)), ngram)
    approved = [(result, Bundle.from_dict(stored)) for result, stored in approved_results()]
    index -= boilerplate((b.case.facts for _r, b in approved), index, ngram, boilerplate_max)
    kept = dropped = written = 0
    stages: dict[str, int] = {}
    with open(out, "w", encoding="utf-8") as handle:
        for result, bundle in approved:
            if is_contaminated(bundle.case.facts, index, ngram):
                dropped += 1
                continue
            kept += 1
            for example in approved_examples(bundle, lang=lang):
                example.update(run=result.run_id, defendant=result.position, prompt_version=PROMPT_VERSION,
                               source="reviewer-approved")
                handle.write(json.dumps(example, ensure_ascii=False) + "\n")
                stages[example["stage"]] = stages.get(example["stage"], 0) + 1
                written += 1
    return {"results_kept": kept, "results_dropped_contaminated": dropped, "examples": written, "per_stage": stages}
