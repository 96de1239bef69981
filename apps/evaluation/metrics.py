"""Evaluation metrics for judgment prediction runs (pure Python, no Django).

The protocol mirrors the LegalGraphRAG paper's evaluator (its evaluation/evaluate_results.py):

* entries: one per defendant judgment, each compared with the record's (case-level) gold set
  (``defendant_entries``): a record naming three defendants contributes three entries.  The term
  is scored once per record, on its first judgment.  The per-record view (the union of a
  record's defendants, ``record_entry``) is kept as a second line, not the comparable figure;

* charges: names are normalised (whitespace removed, 罪 appended) and a predicted
  name counts as a gold name when the gold name is a character subsequence of it
  (贩卖毒品罪 inside 走私、贩卖、运输、制造毒品罪).  Accuracy is the share of
  entries whose sets match exactly; micro-F1 pools TP/FP/FN over all entries.
* articles: compared as integers (sub-article 133-1 counts as 133).  Entries with
  no gold articles are left out of the article, traceability and retrieval metrics.
* term: the first defendant's sentence, see `term_months` for the conventions.
* failed entries (empty predictions) always count as wrong and are never excluded.

All ratios are fractions in 0..1 and a ratio whose denominator is zero is None.
Everything `evaluate` returns is JSON-serialisable.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from worker.agents.numerals import chinese_to_int, parse_article_label

TERM_LIFE_MONTHS = 300
TERM_DEATH_MONTHS = 360

# "264" or the article key form "133-1" (ASCII or full-width digits).
_ARTICLE_KEY_RE = re.compile(r"(\d+)(?:-(\d+))?")

COST_FIELDS = ("llm_calls", "prompt_tokens", "completion_tokens", "tokens", "seconds")

ROW_COLUMNS = (
    "run", "scope", "n", "charge_acc", "charge_f1", "article_acc", "article_f1", "term_exact", "term_mae",
    "traceable_correct", "untraceable_correct", "recall_candidates", "recall_verified", "retrieval_error_rate",
    "llm_calls_mean", "tokens_mean", "seconds_mean",
)  # fmt: skip

COMPARE_KEYS = (
    "charges.accuracy", "charges.micro_f1", "charges.precision", "charges.recall",
    "articles.accuracy", "articles.micro_f1", "term.exact", "term.mae",
    "traceable_correct", "untraceable_correct",
    "retrieval.recall_candidates", "retrieval.recall_verified", "retrieval.error_rate",
    "cost.llm_calls.mean", "cost.tokens.mean", "cost.seconds.mean",
)  # fmt: skip


RARE_MAX_TRAINING_CASES = 12  # the rare slice: the record's rarest gold charge has at most this many training cases


@dataclass
class Entry:
    """One evaluated case: gold labels, predictions, retrieval sets and cost totals."""

    id: str
    gold_charges: list[str]
    gold_articles: list
    gold_term: dict | None
    pred_charges: list[str]
    pred_articles: list
    pred_term: dict | None
    candidate_articles: list = field(default_factory=list)
    verified_articles: list = field(default_factory=list)
    status: str = "judged"
    defendants: int = 1
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cited_unsupported: int = 0  # articles the judgment cites without one supported checklist item
    cited: int = 0  # articles the judgment cites


# --- charges -----------------------------------------------------------------


def normalize_charge(name: str) -> str:
    """Remove all whitespace and append 罪 unless present: " 盗窃 " -> "盗窃罪"; "" stays ""."""
    text = "".join(name.split())
    if not text or text.endswith("罪"):
        return text
    return text + "罪"


def is_subsequence(small: str, big: str) -> bool:
    """True when the characters of `small` occur in `big` in order (gaps allowed)."""
    pos = 0
    for ch in small:
        pos = big.find(ch, pos)
        if pos < 0:
            return False
        pos += 1
    return True


def _charge_set(names: list[str]) -> set[str]:
    return {n for n in (normalize_charge(name) for name in names) if n}


def map_predicted(pred: list[str], gold: list[str]) -> set[str]:
    """Normalise predicted charges and map each onto a gold charge where possible.

    An exact (normalised) match wins; otherwise the first gold charge, in gold order,
    that is a subsequence of the predicted name replaces it.  Unmatched predictions
    are kept as they are (they become false positives).  无罪 is an ordinary label.
    """
    gold_norm = [g for g in (normalize_charge(name) for name in gold) if g]
    mapped: set[str] = set()
    for p in _charge_set(pred):
        if p in gold_norm:
            mapped.add(p)
            continue
        mapped.add(next((g for g in gold_norm if is_subsequence(g, p)), p))
    return mapped


# --- articles ----------------------------------------------------------------


def article_number(value: Any) -> int | None:
    """The base article number: 264, "264", "133-1" -> 133, "第一百三十三条之一" -> 133.

    Bare numerals ("二百六十四") are accepted too.  None when unparseable or not positive.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if not isinstance(value, str):
        return None
    text = "".join(value.split())
    if not text:
        return None
    match = _ARTICLE_KEY_RE.fullmatch(text)
    if match:
        number = int(match.group(1))
    else:
        try:
            number = parse_article_label(text)[0]
        except ValueError:
            try:
                number = chinese_to_int(text)
            except ValueError:
                return None
    return number if number > 0 else None


def _article_set(values: list) -> set[int]:
    return {n for n in (article_number(v) for v in values) if n is not None}


# --- term --------------------------------------------------------------------


def term_category(term: dict | None) -> str | None:
    """The term's class: "death", "life" or "fixed"; None when missing.  Death wins over life."""
    if term is None:
        return None
    if term.get("death"):
        return "death"
    if term.get("life"):
        return "life"
    return "fixed"


def term_months(term: dict | None) -> int:
    """Months used for MAE: fixed terms as given, life = TERM_LIFE_MONTHS (300),
    death = TERM_DEATH_MONTHS (360), a missing term (None) = 0.

    Exact match does not use these numbers: life and death are categories there.
    """
    category = term_category(term)
    if category is None:
        return 0
    if category == "death":
        return TERM_DEATH_MONTHS
    if category == "life":
        return TERM_LIFE_MONTHS
    return int(term.get("months") or 0)  # type: ignore[union-attr]


def _term_exact(gold: dict, pred: dict | None) -> bool:
    """Same category and, for fixed terms, the same months.  A missing prediction is wrong."""
    if pred is None:
        return False
    category = term_category(gold)
    if category != term_category(pred):
        return False
    return category != "fixed" or term_months(gold) == term_months(pred)


# --- per entry ---------------------------------------------------------------


def entry_scores(e: Entry) -> dict:
    """Per-entry booleans and counts; article/traceability/term fields are None when unscored.

    traceable: charges exactly right and every gold article is in the verified set;
    untraceable: charges exactly right but some gold article is not verified.
    """
    gold_c = _charge_set(e.gold_charges)
    pred_c = map_predicted(e.pred_charges, e.gold_charges)
    gold_a = _article_set(e.gold_articles)
    pred_a = _article_set(e.pred_articles)
    cand = _article_set(e.candidate_articles)
    verified = _article_set(e.verified_articles)
    charges_exact = gold_c == pred_c
    scored = bool(gold_a)
    all_verified = gold_a <= verified
    return {
        "id": e.id,
        "status": e.status,
        "charges_gold": sorted(gold_c),
        "charges_pred": sorted(pred_c),
        "charges_exact": charges_exact,
        "charges_tp": len(gold_c & pred_c),
        "charges_fp": len(pred_c - gold_c),
        "charges_fn": len(gold_c - pred_c),
        "articles_scored": scored,
        "articles_gold": sorted(gold_a),
        "articles_pred": sorted(pred_a),
        "articles_exact": (gold_a == pred_a) if scored else None,
        "articles_tp": len(gold_a & pred_a) if scored else 0,
        "articles_fp": len(pred_a - gold_a) if scored else 0,
        "articles_fn": len(gold_a - pred_a) if scored else 0,
        "term_exact": _term_exact(e.gold_term, e.pred_term) if e.gold_term is not None else None,
        "term_abs_error": abs(term_months(e.pred_term) - term_months(e.gold_term)) if e.gold_term is not None else None,
        "traceable": (charges_exact and all_verified) if scored else None,
        "untraceable": (charges_exact and not all_verified) if scored else None,
        "gold_count": len(gold_a),
        "candidate_count": len(cand),
        "candidate_hits": len(gold_a & cand),
        "candidate_misses": len(cand - gold_a),
        "verified_hits": len(gold_a & verified),
    }


# --- aggregation -------------------------------------------------------------


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _set_metrics(scores: list[dict], prefix: str) -> dict:
    """Exact-match accuracy and pooled precision/recall/micro-F1 for charges or articles."""
    tp = sum(s[f"{prefix}_tp"] for s in scores)
    fp = sum(s[f"{prefix}_fp"] for s in scores)
    fn = sum(s[f"{prefix}_fn"] for s in scores)
    exact = sum(1 for s in scores if s[f"{prefix}_exact"])
    return {
        "n": len(scores),
        "accuracy": _ratio(exact, len(scores)),
        "micro_f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def _cost_value(e: Entry, name: str) -> float:
    if name == "tokens":
        return e.prompt_tokens + e.completion_tokens
    return getattr(e, name)


def _cost(entries: list[Entry]) -> dict:
    """Mean and median per defendant of each cost field (a defendant count below 1 counts as 1)."""
    result: dict[str, Any] = {"defendants": sum(max(1, e.defendants) for e in entries)}
    for name in COST_FIELDS:
        values = [_cost_value(e, name) / max(1, e.defendants) for e in entries]
        result[name] = {
            "mean": statistics.fmean(values) if values else None,
            "median": statistics.median(values) if values else None,
        }
    return result


def _category(scores: list[dict], charges: list[str]) -> dict:
    wanted = _charge_set(charges)
    members = [s for s in scores if wanted & set(s["charges_gold"])]
    charge = _set_metrics(members, "charges")
    article = _set_metrics([s for s in members if s["articles_scored"]], "articles")
    return {
        "n": len(members),
        "charge_accuracy": charge["accuracy"],
        "charge_micro_f1": charge["micro_f1"],
        "article_n": article["n"],
        "article_accuracy": article["accuracy"],
    }


def evaluate(entries: list[Entry], categories: dict[str, list[str]] | None = None) -> dict:
    """All run-level metrics as a JSON-serialisable dict (see the module docstring)."""
    scores = [entry_scores(e) for e in entries]
    art = [s for s in scores if s["articles_scored"]]
    term = [s for s in scores if s["term_exact"] is not None]
    gold_total = sum(s["gold_count"] for s in art)
    cand_total = sum(s["candidate_count"] for s in art)
    return {
        "n": len(scores),
        "charges": _set_metrics(scores, "charges"),
        "articles": _set_metrics(art, "articles"),
        "term": {
            "n": len(term),
            "exact": _ratio(sum(1 for s in term if s["term_exact"]), len(term)),
            "mae": _ratio(sum(s["term_abs_error"] for s in term), len(term)),
        },
        "traceable_n": len(art),
        "traceable_correct": _ratio(sum(1 for s in art if s["traceable"]), len(art)),
        "untraceable_correct": _ratio(sum(1 for s in art if s["untraceable"]), len(art)),
        "retrieval": {
            "n": len(art),
            "recall_candidates": _ratio(sum(s["candidate_hits"] for s in art), gold_total),
            "recall_verified": _ratio(sum(s["verified_hits"] for s in art), gold_total),
            "error_rate": _ratio(sum(s["candidate_misses"] for s in art), cand_total),
        },
        "cost": _cost(entries),
        "citations": {"articles": sum(e.cited for e in entries),
                      "without_supported_item": sum(e.cited_unsupported for e in entries)},
        "status": dict(sorted(Counter(e.status for e in entries).items())),
        "categories": {title: _category(scores, charges) for title, charges in (categories or {}).items()},
    }


def rare_ids(golds: dict[str, list[str]], training_counts: dict[str, int],
             threshold: int = RARE_MAX_TRAINING_CASES) -> set[str]:
    """Records whose rarest gold charge has at most ``threshold`` training cases (a gold name counts
    the training cases of the same name, after normalisation)."""
    counts: dict[str, int] = {}
    for name, n in training_counts.items():
        key = normalize_charge(name)
        counts[key] = counts.get(key, 0) + int(n)
    return {rid for rid, gold in golds.items()
            if gold and min(counts.get(normalize_charge(g), 0) for g in gold) <= threshold}


def evaluate_protocols(records: list[dict], categories: dict[str, list[str]] | None = None,
                       training_counts: dict[str, int] | None = None) -> dict:
    """Both views of one run. ``records``: {"defendant_entries": [Entry], "record_entry": Entry} per record.

    The top level is the paper's per-defendant protocol (the comparable figure); ``per_record`` holds the
    union view, and ``slices.rare`` both views restricted to the rare records when ``training_counts`` is given.
    """
    per_defendant = [e for r in records for e in r["defendant_entries"]]
    per_record = [r["record_entry"] for r in records]
    result = evaluate(per_defendant, categories)
    result["protocol"] = "per_defendant"
    result["records"] = len(records)
    result["per_record"] = evaluate(per_record, categories)
    result["per_record"]["protocol"] = "per_record"
    if training_counts is not None:
        rare = rare_ids({r["record_entry"].id: r["record_entry"].gold_charges for r in records}, training_counts)
        chosen = [r for r in records if r["record_entry"].id in rare]
        result["slices"] = {"rare": {
            "definition": f"records whose rarest gold charge has at most {RARE_MAX_TRAINING_CASES} training cases",
            "records": len(chosen),
            "per_defendant": _slice_summary(evaluate([e for r in chosen for e in r["defendant_entries"]])),
            "per_record": _slice_summary(evaluate([r["record_entry"] for r in chosen])),
        }}
    return result


def _slice_summary(result: dict) -> dict:
    return {"n": result["n"], "charge_accuracy": result["charges"]["accuracy"], "charge_micro_f1": result["charges"]["micro_f1"],
            "article_accuracy": result["articles"]["accuracy"], "term_mae": result["term"]["mae"]}


# --- presentation helpers ----------------------------------------------------


def _cell(value: Any) -> Any:
    return "" if value is None else value


def metrics_rows(result: dict, run_label: str) -> list[dict]:
    """Flat CSV rows: one 'overall' row, then one per category ('' where not applicable)."""
    cost = result["cost"]
    overall = {
        "run": run_label,
        "scope": "overall",
        "n": result["n"],
        "charge_acc": result["charges"]["accuracy"],
        "charge_f1": result["charges"]["micro_f1"],
        "article_acc": result["articles"]["accuracy"],
        "article_f1": result["articles"]["micro_f1"],
        "term_exact": result["term"]["exact"],
        "term_mae": result["term"]["mae"],
        "traceable_correct": result["traceable_correct"],
        "untraceable_correct": result["untraceable_correct"],
        "recall_candidates": result["retrieval"]["recall_candidates"],
        "recall_verified": result["retrieval"]["recall_verified"],
        "retrieval_error_rate": result["retrieval"]["error_rate"],
        "llm_calls_mean": cost["llm_calls"]["mean"],
        "tokens_mean": cost["tokens"]["mean"],
        "seconds_mean": cost["seconds"]["mean"],
    }
    rows = [{col: _cell(overall[col]) for col in ROW_COLUMNS}]
    if result.get("per_record"):  # the second view: one row, scope "overall (per record)"
        record_row = metrics_rows({k: v for k, v in result["per_record"].items() if k != "categories"}, run_label)[0]
        rows.append(dict(record_row, scope="overall (per record)"))
    for title, cat in result.get("categories", {}).items():
        row = dict.fromkeys(ROW_COLUMNS, "")
        row.update(
            run=run_label,
            scope=title,
            n=cat["n"],
            charge_acc=_cell(cat["charge_accuracy"]),
            charge_f1=_cell(cat["charge_micro_f1"]),
            article_acc=_cell(cat["article_accuracy"]),
        )
        rows.append(row)
    return rows


def _lookup(result: dict, key: str) -> Any:
    """Follow a dotted path such as "cost.tokens.mean"; None when any part is missing."""
    value: Any = result
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def compare(results: dict[str, dict], keys: tuple[str, ...] | list[str] = COMPARE_KEYS) -> list[dict]:
    """Side-by-side rows {"metric", <run>: value…, "delta_<run>": value - first run…}.

    Deltas are given for every run after the first; None when either value is missing.
    """
    runs = list(results)
    rows = []
    for key in keys:
        values = {run: _lookup(results[run], key) for run in runs}
        row: dict[str, Any] = {"metric": key, **values}
        if runs:
            base = values[runs[0]]
            for run in runs[1:]:
                ok = isinstance(base, (int, float)) and isinstance(values[run], (int, float))
                row[f"delta_{run}"] = values[run] - base if ok else None
        rows.append(row)
    return rows
