"""Fine-tuning data for the agent LLM: the product's own stage prompts with the corpus's labels as answers.

    python -m training.sft_export --cases ../shared/data/cases.jsonl --statutes ../shared/data/statutes.jsonl \
        --exclude ../shared/data/eval/cail_dev.jsonl --exclude ../shared/data/eval/smoke.jsonl --out sft.jsonl

Two supervised stages, in the chat format of OpenAI-compatible trainers ({"messages": [...]} with the
assistant's JSON answer last):
- ``predict_charges``: the facts → the gold charges;
- ``adjudicate``: the facts and the cited articles' texts as numbered evidence → acts, charges,
  articles, the term, and a short reasoning whose citations point at that evidence.

Contamination filter: a training case is dropped when its normalised facts share any run of
``--ngram`` (default 20) characters with a fact of an excluded (evaluation) file, so no evaluation
case reaches the model even as a near-duplicate. Court boilerplate ("上述事实，被告人在开庭审理过程中
亦无异议…") also forms shared 20-grams: an n-gram found in more than ``--boilerplate`` (default 2)
training cases is boilerplate and ignored. A genuine copy of an evaluation case is one near-duplicate
after the corpus de-duplication, not a phrase many cases share. Measured on cases.jsonl against
cail_dev + smoke: without the boilerplate rule 2,986 of 13,110 cases would be dropped, with it 664.
The prompts are built by worker.agents.prompts, so training and inference see the same text.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# The filter's parts are also this module's names (its tests read them here).
from lexlib.contamination import boilerplate, contamination_index, is_contaminated, ngrams, normalise  # noqa: F401
from worker.agents.numerals import article_label
from worker.agents.prompts import PROMPT_VERSION, build_prompt

def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _term_words(term: dict) -> str:
    if term.get("death"):
        return "死刑"
    if term.get("life"):
        return "无期徒刑"
    return f"有期徒刑或拘役{term['months']}个月" if term.get("months") else "免予刑事处罚或单处罚金"


def examples(case: dict, statutes: dict[str, dict], *, lang: str = "zh") -> list[dict]:
    """The supervised examples one labelled case gives (none when it lacks the labels a stage needs)."""
    out = []
    charges = list(dict.fromkeys(case.get("charges") or []))
    defendants = case.get("defendants") or []
    if len(defendants) > 1 or case.get("per_defendant"):
        return out  # case-level labels do not say which defendant did what
    defendant = defendants[0] if defendants else ""
    if charges and len(charges) <= 3:
        prompt = build_prompt("predict_charges", lang, facts=case["fact"], defendant=defendant)
        answer = {"charges": charges, "reasoning": ""}
        out.append({"stage": "predict_charges", "messages": prompt.messages + [_assistant(answer)]})
    articles = [str(a) for a in case.get("articles") or [] if str(a) in statutes]
    term = case.get("term")
    if charges and articles and term and term.get("months") is not None:
        evidence = [{"kind": "article", "ref": key, "text": statutes[key]["text"]} for key in articles]
        prompt = build_prompt("adjudicate", lang, facts=case["fact"], defendant=defendant, evidence=evidence)
        cites = "".join(f"[{i}]" for i in range(1, len(evidence) + 1))
        labels = "、".join(article_label(int(k)) for k in articles)
        answer = {
            "acts": [{"description": "、".join(charges), "articles": articles}],
            "charges": charges, "articles": articles,
            "term": {"months": int(term.get("months") or 0), "life": bool(term.get("life")), "death": bool(term.get("death"))},
            "reasoning": f"依照刑法{labels}{cites}，被告人的行为构成{'、'.join(charges)}，判处{_term_words(term)}。",
        }
        out.append({"stage": "adjudicate", "messages": prompt.messages + [_assistant(answer)]})
    return out


def _assistant(answer: dict) -> dict:
    return {"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.sft_export", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--statutes", type=Path, required=True)
    parser.add_argument("--exclude", type=Path, action="append", default=[], help="evaluation files (repeatable)")
    parser.add_argument("--ngram", type=int, default=20)
    parser.add_argument("--boilerplate", type=int, default=2,
                        help="ignore n-grams shared by more than this many training cases")
    parser.add_argument("--lang", default="zh", choices=("zh", "en"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.ngram < 8:
        parser.error("--ngram below 8 would drop nearly everything")
    statutes = {str(s["number"]): s for s in _read_jsonl(args.statutes) if s.get("sub", 0) == 0 and s.get("text")}
    index = contamination_index((r["fact"] for path in args.exclude for r in _read_jsonl(path)), args.ngram)
    cases = _read_jsonl(args.cases)
    common = boilerplate((c["fact"] for c in cases), index, args.ngram, args.boilerplate)
    index -= common
    kept = dropped = written = 0
    stages: dict[str, int] = {}
    with args.out.open("w", encoding="utf-8") as handle:
        for case in cases:
            if is_contaminated(case["fact"], index, args.ngram):
                dropped += 1
                continue
            kept += 1
            for example in examples(case, statutes, lang=args.lang):
                example["case_id"] = case["id"]
                example["prompt_version"] = PROMPT_VERSION
                handle.write(json.dumps(example, ensure_ascii=False) + "\n")
                stages[example["stage"]] = stages.get(example["stage"], 0) + 1
                written += 1
    print(json.dumps({"cases_kept": kept, "cases_dropped_contaminated": dropped, "examples": written,
                      "per_stage": stages, "ngram": args.ngram, "boilerplate_ngrams_ignored": len(common), "excluded_files": [str(p) for p in args.exclude]},
                     ensure_ascii=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
