"""Train the statistical charge, article and term models on the case corpus.

    python -m training.statistical --cases ../shared/data/cases.jsonl --out DIR [--holdout 0.1 --seed 13]
        [--statutes ../shared/data/statutes.jsonl --checklists ../shared/data/checklists.jsonl]

Labels per case:
  charges   the charges of all defendants (``per_defendant`` when present, else
            the top-level list);
  articles  the labelled Criminal Law articles >= 102 (the CAIL convention:
            the specific part only), cases without any are skipped;
  term      months / life / death of single-defendant cases with a term.

With ``--statutes`` and ``--checklists`` (the shared schema) two more models are trained:
  verifier  the checklist-item verifier, weakly supervised (training/verifier.py);
  intent    the intent classifier of articles and queries (training/intent.py).

Cases are split into train and held-out by a seeded hash of their id, so the
split is stable when cases are added. The evaluation sets (``eval/``) are never
read here: ``eval/cail_dev.jsonl`` is a development benchmark. Facts are
tokenized once with the project tokenizer, whose fingerprint is stored in
every artefact. Each model is evaluated on the held-out split and written to
``DIR/<name>/`` with its metrics in its metadata; ``DIR/report.json`` holds the
table printed at the end.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.text_models import (
    MultilabelEvaluator,
    TermEvaluator,
    evaluate,
    fit_binary,
    fit_multilabel,
    fit_regression,
)
from training.devsplit import dev_split_ids
from training.intent import intent_examples
from training.longtail import DEFAULTS as LONGTAIL, article_documents, charge_documents, fit_longtail, legal_texts
from training.term import (
    ADJUSTMENT, FOLDS as TERM_FOLDS, charge_balance, contexts as term_contexts, fit_adjustment, legal_context,
)
from training.verifier import Structure, VerifierEvaluator, build_pairs, fit_verifier
from worker.agents.models.artefact import jsonable
from worker.agents.models.sentencing import SENTENCING_FEATURES, term_inputs
from worker.agents.models.textmodel import LinearTextModel, TermAdjustment, TermModel
from worker.agents.models.verifier import ChecklistVerifier
from worker.agents.stages.features import extract_features

MODEL_NAMES = ("charges", "articles", "term")
STRUCTURE_MODELS = ("verifier", "intent")  # need the statutes and checklists
ALL_MODELS = MODEL_NAMES + STRUCTURE_MODELS
MIN_SPECIFIC_ARTICLE = 102

# Measured on the full corpus (10% held out, seed 13, held-out charges/articles
# with calibration): unigrams beat unigrams+bigrams (top-1 0.877/0.912 vs
# 0.855/0.899, exact-set 0.754/0.819 vs 0.733/0.800) at a third of the fit
# time; C = 10, 30 and 100 are within 0.5 point of each other; 5 calibration
# folds instead of 3 change nothing measurable for 1.6x the time; lbfgs fits
# about 1.7x faster than liblinear at the same accuracy. Calibration costs
# about 2x the plain fit and lifts top-1 by 1.5 points (per-label Platt
# reorders labels) and cuts the top-1 calibration error from 0.136 to 0.084.
DEFAULTS: dict[str, Any] = {
    "min_df": 2,
    "max_features": 200_000,
    "bigrams": False,
    "C": 30.0,
    "calibration_folds": 3,
    "calibration_strength": 1.0,
    "alpha": 1.0,
    # The months model's weight per case: its rarest charge's training count to the power -term_balance
    # (training/term.py charge_balance). On the development split with the gold charges (held-out term MAE,
    # 2026-12-07): 0 13.61 months, 0.25 13.38, 0.5 13.13, 0.75 13.22, 1 14.42.
    "term_balance": 0.5,
    "verifier_max_cases": 4000,  # training precedents for the verifier's pairs (about 25 pairs each)
    "verifier_C": 1.0,
    "intent_fact_sentences": 3000,
    # The long-tail charge and article classifiers (training/longtail.py; chosen on the development split).
    "longtail_C": LONGTAIL["C"],
    "char_ngrams": LONGTAIL["char_ngrams"],
    "longtail_max_features": LONGTAIL["max_features"],
    "folds": LONGTAIL["folds"],
}


# ---------------------------------------------------------------------- data
def load_cases(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    path = Path(path)
    if path.resolve().parent.name == "eval" or path.name in {"cail_dev.jsonl", "smoke.jsonl"}:
        raise SystemExit(f"refusing to train on an evaluation set: {path}")
    cases = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    cases.append(json.loads(line))
                except ValueError as exc:
                    raise SystemExit(f"{path}:{lineno}: {exc}") from exc
    return cases


def load_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """A JSONL file of records (statutes, checklists)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def charge_labels(case: dict[str, Any]) -> set[str]:
    if case.get("per_defendant"):
        return {c for d in case["per_defendant"] for c in d.get("charges") or []}
    return set(case.get("charges") or [])


def article_labels(case: dict[str, Any]) -> set[int]:
    return {int(a) for a in case.get("articles") or [] if int(a) >= MIN_SPECIFIC_ARTICLE}


def term_label(case: dict[str, Any]) -> dict[str, Any] | None:
    term = case.get("term")
    if not term or case.get("per_defendant") or len(case.get("defendants") or []) > 1:
        return None
    if term.get("months") is None:
        return None
    return {"months": int(term["months"]), "life": bool(term.get("life")), "death": bool(term.get("death"))}


def is_heldout(case_id: str, holdout: float, seed: int) -> bool:
    """Stable split: the case is held out when sha256(seed:id) falls below the fraction."""
    digest = hashlib.sha256(f"{seed}:{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < holdout


def case_fold(case_id: str, folds: int, seed: int) -> int:
    """The out-of-fold group of a training case: the same for every model, whatever cases it learns from."""
    digest = hashlib.sha256(f"{seed}:fold:{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % folds


def ids_sha256(ids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


# ---------------------------------------------------------------------- jobs
def _subset(items: Sequence[Any], idx: Sequence[int]) -> list[Any]:
    return [items[i] for i in idx]


def train_all(
    cases: Sequence[dict[str, Any]],
    tokens: Sequence[Sequence[str]],
    *,
    out: Path | None,
    holdout: float,
    seed: int,
    base_metadata: dict[str, Any],
    models: Sequence[str] = MODEL_NAMES,
    max_train: int | None = None,
    params: dict[str, Any] | None = None,
    baselines: dict[str, Any] | None = None,
    statutes: Sequence[dict[str, Any]] | None = None,
    checklists: Sequence[dict[str, Any]] | None = None,
    interpretations: Sequence[dict[str, Any]] | None = None,
    aliases: dict[str, str | None] | None = None,
    split_ids: set[str] | None = None,
    tokenize_many=None,
    log=print,
) -> dict[str, dict[str, Any]]:
    """Fit, evaluate and (if ``out``) save each model; returns {name: {metrics, fit_s, ...}}.

    ``baselines`` (name → a loaded model, e.g. the active one) are evaluated on the same
    held-out cases with the same evaluator: the registry's promotion gate compares the two.
    The verifier and intent models need ``statutes`` and ``checklists`` (shared-schema records);
    the intent model also ``tokenize_many`` (texts → token lists, the tokens' tokenizer).
    """
    baselines = baselines or {}
    p = dict(DEFAULTS, **(params or {}))
    # The held-out cases: the development split when given (training/devsplit.py), else a hash split.
    if split_ids is not None:
        held = np.array([c["id"] in split_ids for c in cases], dtype=bool)
    else:
        held = np.array([is_heldout(c["id"], holdout, seed) for c in cases], dtype=bool)
    train_idx_all = np.flatnonzero(~held)
    if max_train is not None and len(train_idx_all) > max_train:
        # A stable subset: the training cases with the smallest hash.
        order = sorted(train_idx_all, key=lambda i: hashlib.sha256(f"{seed}:sub:{cases[i]['id']}".encode()).digest())
        train_idx_all = np.sort(np.array(order[:max_train]))
    train_mask = np.zeros(len(cases), dtype=bool)
    train_mask[train_idx_all] = True
    created_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    results: dict[str, dict[str, Any]] = {}
    feature_args = {"min_df": p["min_df"], "max_features": p["max_features"], "bigrams": p["bigrams"]}
    lr_args = dict(feature_args, C=p["C"], calibration_folds=p["calibration_folds"],
                   calibration_strength=p["calibration_strength"], seed=seed)  # fmt: skip

    def meta_for(name: str, train_ids: list[str], heldout_ids: list[str]) -> dict[str, Any]:
        meta = json.loads(json.dumps(base_metadata))
        meta["name"] = name
        meta["created_at"] = created_at
        meta["training_data"].update(
            n_train=len(train_ids), n_heldout=len(heldout_ids),
            train_ids_sha256=ids_sha256(train_ids), heldout_ids_sha256=ids_sha256(heldout_ids),
        )  # fmt: skip
        return meta

    for name in models:
        if name not in ALL_MODELS:
            raise ValueError(f"unknown model {name!r}")
        if name in STRUCTURE_MODELS and (statutes is None or checklists is None):
            raise ValueError(f"the {name} model needs the statutes and the checklists")
        started = time.perf_counter()
        n_labels = None
        try:
            structure_data = name not in STRUCTURE_MODELS or _structure_data_check(name, cases, train_mask, statutes, checklists)
        except ValueError as exc:
            structure_data = False
            log(f"[{name}] skipped: {exc}")
        if not structure_data:
            continue
        if name == "verifier":
            structure = Structure(statutes, checklists)
            train_cases = [cases[i] for i in np.flatnonzero(train_mask)]
            train_cases = sorted(train_cases, key=lambda c: hashlib.sha256(f"{seed}:verifier:{c['id']}".encode()).digest())
            facts_tr, pairs_tr = build_pairs(train_cases[: p["verifier_max_cases"]], structure, seed=seed)
            held_cases = [cases[i] for i in np.flatnonzero(held)]
            facts_te, pairs_te = build_pairs(held_cases, structure, seed=seed)
            tr, te = pairs_tr, pairs_te
            meta = meta_for(name, [c["id"] for c in train_cases[: p["verifier_max_cases"]]], [c["id"] for c in held_cases])
            meta["training_data"]["n_cases_with_pairs"] = len(facts_tr)
            meta["hyperparameters"] = {"C": p["verifier_C"], "max_cases": p["verifier_max_cases"]}
            model = fit_verifier(facts_tr, pairs_tr, C=p["verifier_C"], seed=seed, metadata=meta)
            fit_s = time.perf_counter() - started
            evaluator = VerifierEvaluator(facts_te, pairs_te)
            metrics = evaluate(evaluator, model)
            baseline_metrics = evaluate(evaluator, baselines[name]) if name in baselines else None
            model.metadata["metrics"] = jsonable(metrics)
            model.metadata["timings"]["wall_s"] = round(fit_s, 2)
        elif name == "intent":
            train_cases = [cases[i] for i in np.flatnonzero(train_mask)]
            examples = intent_examples(statutes, train_cases, max_fact_sentences=p["intent_fact_sentences"], seed=seed)
            example_tokens = tokenize_many([text for _, text, _ in examples])
            is_te = [is_heldout(eid, holdout, seed) for eid, _, _ in examples]
            tr = [i for i, h in enumerate(is_te) if not h]
            te = [i for i, h in enumerate(is_te) if h]
            meta = meta_for(name, [examples[i][0] for i in tr], [examples[i][0] for i in te])
            meta["weak_labels"] = "training/intent.py (article structure and precedents' facts)"
            model = fit_multilabel(
                _subset(example_tokens, tr), [examples[i][2] for i in tr], metadata=meta, task=name,
                **dict(lr_args, min_df=1),
            )  # fmt: skip
            fit_s = time.perf_counter() - started
            evaluator = MultilabelEvaluator(_subset(example_tokens, te), [examples[i][2] for i in te], name=name)
            metrics = evaluate(evaluator, model)
            baseline_metrics = evaluate(evaluator, baselines[name]) if name in baselines else None
            model.metadata["metrics"] = jsonable(metrics)
            model.metadata["timings"]["wall_s"] = round(fit_s, 2)
            n_labels = len(model.labels)
        elif name in ("charges", "articles"):
            label_of = charge_labels if name == "charges" else article_labels
            labels = [label_of(c) for c in cases]
            tr = [i for i in np.flatnonzero(train_mask) if labels[i]]
            te = [i for i in np.flatnonzero(held) if labels[i]]
            meta = meta_for(name, [cases[i]["id"] for i in tr], [cases[i]["id"] for i in te])
            extra = _legal_extra(name, {x for i in tr for x in labels[i]}, statutes, checklists, interpretations,
                                 aliases, tokenize_many)
            folds = max(2, min(p["folds"], len(tr)))
            fit = fit_longtail(_subset(tokens, tr), _subset(labels, tr), extra=extra, C=p["longtail_C"],
                               char_ngrams=p["char_ngrams"], max_features=p["longtail_max_features"],
                               folds=folds, fold_of=[case_fold(cases[i]["id"], folds, seed) for i in tr],
                               seed=seed, metadata=meta, task=name)
            model = fit.model
            fit_s = time.perf_counter() - started
            evaluator = MultilabelEvaluator(_subset(tokens, te), _subset(labels, te), name=name)
            metrics = evaluate(evaluator, model) if te else {"primary_metric": "exact_set_accuracy", "n": 0,
                                                              "exact_set_accuracy": None, "eval_s": 0.0}
            baseline_metrics = evaluate(evaluator, baselines[name]) if name in baselines and te else None
            model.metadata["metrics"] = jsonable(metrics)
            model.metadata["timings"]["wall_s"] = round(fit_s, 2)
            n_labels = len(model.labels)
            if out is not None:  # the out-of-fold models: the Auditor's training data is computed with them
                for f, fold_model in enumerate(fit.folds):
                    fold_model.save(out / "folds" / str(f) / name)
                (out / "folds").mkdir(parents=True, exist_ok=True)
                (out / "folds" / f"{name}.json").write_text(json.dumps(
                    {cases[i]["id"]: int(f) for i, f in zip(tr, fit.fold_of)}), encoding="utf-8")
        else:
            gold = [term_label(c) for c in cases]
            tr = [i for i in np.flatnonzero(train_mask) if gold[i] is not None]
            te = [i for i in np.flatnonzero(held) if gold[i] is not None]
            meta = meta_for(name, [cases[i]["id"] for i in tr], [cases[i]["id"] for i in te])
            meta["inputs"] = "sentencing.term_inputs: facts + charge markers + circumstance markers"
            # The gold charges and the facts' circumstances as marker terms (worker/agents/models/sentencing.py).
            term_tokens = {i: term_inputs(list(tokens[i]), sorted(charge_labels(cases[i])),
                                          [label for _, label in extract_features(cases[i].get("fact") or "").labels()])
                           for i in tr + te}
            inputs = [term_tokens.get(i, t) for i, t in enumerate(tokens)]
            fixed = [i for i in tr if not (gold[i]["life"] or gold[i]["death"])]
            weights = charge_balance([charge_labels(cases[i]) for i in fixed], p["term_balance"])
            months = fit_regression(
                _subset(inputs, fixed), [gold[i]["months"] for i in fixed], alpha=p["alpha"],
                target_transform="log1p", metadata=dict(meta, name="term/months"), task="term:months",
                seed=seed, sample_weight=weights, **feature_args,
            )  # fmt: skip
            parts = {}
            for key in ("life", "death"):
                parts[key] = fit_binary(
                    _subset(inputs, tr), [gold[i][key] for i in tr], label=key,
                    metadata=dict(meta, name=f"term/{key}"), task=f"term:{key}", **lr_args,
                )  # fmt: skip
            # The adjustment of the months (training/term.py) on out-of-fold estimates and the sentencing facts.
            context_of = legal_context(statutes, interpretations, aliases)
            context = dict(zip(fixed + te, term_contexts([cases[i].get("fact") or "" for i in fixed + te],
                                                      [sorted(charge_labels(cases[i])) for i in fixed + te], context_of)))
            adjust = fit_adjustment(_subset(inputs, fixed), [gold[i]["months"] for i in fixed], [context[i] for i in fixed],
                                    [case_fold(cases[i]["id"], TERM_FOLDS, seed) for i in fixed], alpha=p["alpha"],
                                    seed=seed, feature_args=feature_args, weights=weights)
            term_meta = dict(meta)
            term_meta["decision_rule"] = ("the median of the sentence: a fixed term log-normal around the months "
                                          "estimate (spread out of fold), then life, then death (median_sentence)")
            term_meta["adjustment"] = {"trees": dict(ADJUSTMENT), "features": ["months_log", *SENTENCING_FEATURES],
                                       "kept": adjust.trees is not None, "oof_mae_linear": adjust.mae_linear,
                                       "oof_mae_adjusted": adjust.mae_adjusted}
            trees = (TermAdjustment(features=SENTENCING_FEATURES, trees=adjust.trees)
                     if adjust.trees is not None else None)
            model = TermModel(months=months, life=parts["life"], death=parts["death"], metadata=term_meta, adjust=trees,
                              spread=adjust.spread)
            fit_s = time.perf_counter() - started
            evaluator = TermEvaluator(_subset(inputs, te), _subset(gold, te), name=name, contexts=[context[i] for i in te])
            metrics = evaluate(evaluator, model)
            baseline_metrics = evaluate(evaluator, baselines[name]) if name in baselines else None
            model.metadata["metrics"] = jsonable(metrics)
            model.metadata["timings"] = {"wall_s": round(fit_s, 2)}
        path = None
        if out is not None:
            path = model.save(out / name)
        results[name] = {
            "metrics": metrics,
            "baseline_metrics": baseline_metrics,
            "fit_s": round(fit_s, 2),
            "n_train": len(tr),
            "n_heldout": len(te),
            "n_labels": n_labels,
            "model_id": model.model_id,
            "path": str(path) if path else None,
            "model": model,
        }
        log(f"[{name}] trained on {len(tr)}, evaluated on {len(te)} in {fit_s:.1f} s + {metrics['eval_s']} s eval")
    return results


def _aliases(path: Path | None) -> dict[str, str | None]:
    if path is None:
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return dict(data.get("aliases", data))


def _legal_extra(name, labels, statutes, checklists, interpretations, aliases, tokenize_many) -> list:
    """The legal texts as extra training documents (training/longtail.py): per charge label the articles
    defining it, per article number its own text, checklist and interpretations."""
    if not statutes or tokenize_many is None:
        return []
    texts = legal_texts(statutes, checklists or (), interpretations or ())
    docs = (charge_documents(sorted(labels), statutes, texts, aliases or {}) if name == "charges"
            else article_documents(labels, statutes, texts))
    tokens = tokenize_many([text for _, text in docs])
    return [(t, {label}) for t, (label, _) in zip(tokens, docs)]


def _structure_data_check(name, cases, train_mask, statutes, checklists) -> bool:
    """Raise ValueError when a small corpus cannot train the verifier (it needs satisfied and unsatisfied pairs)."""
    if name == "verifier":
        structure = Structure(statutes, checklists)
        _, pairs = build_pairs([cases[i] for i in np.flatnonzero(train_mask)], structure)
        if len({p[3] for p in pairs}) < 2:
            raise ValueError("no confusable uncited article with a checklist: no unsatisfied pair to learn from")
    return True


def format_table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        f"{'model':9s} {'train':>6s} {'held':>5s} {'labels':>6s}  {'primary':>26s}  {'fit s':>6s}  other metrics",
    ]
    for name, r in results.items():
        m = r["metrics"]
        if not m.get("n"):  # no held-out case (--no-dev-split on a small corpus)
            lines.append(f"{name:9s} {r['n_train']:6d} {0:5d} {'' if r['n_labels'] is None else r['n_labels']:>6}  "
                         f"{'(no held-out cases)':>26s}  {r['fit_s']:6.1f}")
            continue
        primary = f"{m['primary_metric']}={m[m['primary_metric']]:.4f}"
        if "top1_accuracy" in m:
            other = (
                f"top1={m['top1_accuracy']:.4f} microF1={m['micro_f1']:.4f} R@3={m['recall_at_3']:.4f} "
                f"ECE(top1)={m['ece_top1']:.4f} ECE(labels)={m['ece_labels']:.5f} covered={m['gold_covered']:.4f}"
            )
        elif "roc_auc" in m:
            rule = m["lexical_rule"]
            other = (
                f"brier={m['brier']:.4f} ECE={m['ece']:.4f} acc={m['accuracy']:.4f} satisfied={m['satisfied_rate']:.3f} "
                f"(lexical rule: acc={rule['accuracy']:.4f} satisfied={rule['satisfied_rate']:.3f} "
                f"AUC={rule['roc_auc_best_share']:.4f}); train/held are pairs"
            )
        else:
            other = (
                f"exact={m['exact_match']:.4f} MAE(fixed-term)={m['mae_months_fixed_term']:.2f} "
                f"life {m['life']['n_pred']}/{m['life']['n_gold']} death {m['death']['n_pred']}/{m['death']['n_gold']}"
                " (pred/gold)"
            )
        labels = "" if r["n_labels"] is None else str(r["n_labels"])
        lines.append(
            f"{name:9s} {r['n_train']:6d} {r['n_heldout']:5d} {labels:>6s}  {primary:>26s}  {r['fit_s']:6.1f}  {other}"
        )
    return "\n".join(lines)


def training_tokenizer(cases: list[dict], statutes: list[dict] | None, *, charges: list[str] | None = None):
    """The tokenizer the judgments use (lexlib.search.tokenize.legal_tokenizer_of): our legal dictionary plus
    the charge names. With ``charges`` (the corpus's every charge, as retraining exports them) it adds
    exactly the words serving adds, so training and serving split texts alike (same fingerprint); without
    them, from offline files, the charges the cases and statutes name."""
    # Imported here: building the tokenizer loads jieba's dictionary.
    from lexlib.search.tokenize import legal_tokenizer_of

    if charges is None:
        charges = sorted({c for case in cases for c in charge_labels(case)}
                         | {c for s in statutes or () for c in s.get("charges") or ()})
    return legal_tokenizer_of(charges)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.statistical", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True, type=Path, help="cases.jsonl (never an eval/ file)")
    parser.add_argument("--out", type=Path, help="output directory (omit for a dry run: evaluate only)")
    parser.add_argument("--holdout", type=float, default=0.1, help="held-out fraction (default 0.1)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--models", help=f"comma-separated subset of {','.join(ALL_MODELS)} (default: {','.join(MODEL_NAMES)}, "
                        "plus verifier,intent when --statutes and --checklists are given)")
    parser.add_argument("--statutes", type=Path, help="statutes.jsonl (article structure; for the verifier and intent models)")
    parser.add_argument("--checklists", type=Path, help="checklists.jsonl (for the verifier)")
    parser.add_argument("--charges", type=Path, metavar="FILE",
                        help="every charge name of the corpus, one per line (apps/registry/training.py writes it): the "
                             "tokenizer then adds exactly the words serving adds (without it: the charges of the cases "
                             "and statutes given)")
    parser.add_argument("--interpretations", type=Path,
                        help="interpretations.jsonl (their texts join the legal training documents of the articles they interpret)")
    parser.add_argument("--aliases", type=Path,
                        help="charge_aliases.json: dataset charge name → statute charge (for the charges' legal documents)")
    parser.add_argument("--dev-split", action=argparse.BooleanOptionalAction, default=True,
                        help="hold out the development split (training/devsplit.py) for the held-out metrics and the gate "
                             "(default); --no-dev-split holds out the --holdout hash split instead (a small corpus whose "
                             "every charge the split would thin)")
    parser.add_argument("--max-train", type=int, help="train on at most N cases (stable subset)")
    parser.add_argument("--C", type=float, default=DEFAULTS["C"])
    parser.add_argument("--min-df", type=int, default=DEFAULTS["min_df"])
    parser.add_argument("--max-features", type=int, default=DEFAULTS["max_features"])
    parser.add_argument("--bigrams", action=argparse.BooleanOptionalAction, default=DEFAULTS["bigrams"])
    parser.add_argument("--calibration-folds", type=int, default=DEFAULTS["calibration_folds"])
    parser.add_argument("--alpha", type=float, default=DEFAULTS["alpha"], help="Ridge alpha of the months model")
    parser.add_argument("--term-balance", type=float, default=DEFAULTS["term_balance"],
                        help="weigh the months model's cases by their rarest charge's count to this power, negated")
    parser.add_argument("--export-heldout", type=Path, metavar="FILE",
                        help="write the held-out cases with charges, articles and a single-defendant term (a "
                             "development set the models never saw; evaluate it with --exclude-self) and exit")
    parser.add_argument("--baseline", action="append", default=[], metavar="NAME=DIR",
                        help="evaluate this saved model (e.g. the active one) on the same held-out cases; repeatable")
    args = parser.parse_args(argv)
    if not 0 < args.holdout < 1:
        parser.error("--holdout must be in (0, 1)")
    structure = args.statutes is not None and args.checklists is not None
    models = ([m.strip() for m in args.models.split(",") if m.strip()] if args.models
              else list(ALL_MODELS if structure else MODEL_NAMES))
    unknown = set(models) - set(ALL_MODELS)
    if unknown:
        parser.error(f"unknown models: {sorted(unknown)}")
    if set(models) & set(STRUCTURE_MODELS) and not structure:
        parser.error("the verifier and intent models need --statutes and --checklists")

    if args.export_heldout is not None:
        kept = [c for c in load_cases(args.cases) if is_heldout(c["id"], args.holdout, args.seed)
                and charge_labels(c) and article_labels(c) and term_label(c) is not None]
        args.export_heldout.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept), encoding="utf-8")
        print(f"{len(kept)} held-out cases written to {args.export_heldout}")
        return 0

    baselines = {}
    for spec in args.baseline:
        name, _, directory = spec.partition("=")
        if name not in ALL_MODELS or not directory:
            parser.error(f"--baseline expects NAME=DIR with NAME in {ALL_MODELS}, got {spec!r}")
        loader = {"term": TermModel, "verifier": ChecklistVerifier}.get(name, LinearTextModel)
        baselines[name] = loader.load(directory)

    from lexlib.search.tokenize import TOKENIZER_VERSION

    total_started = time.perf_counter()
    cases = load_cases(args.cases)
    statutes = load_records(args.statutes) if args.statutes else None
    charges = args.charges.read_text(encoding="utf-8").splitlines() if args.charges else None
    tokenizer = training_tokenizer(cases, statutes, charges=charges)
    started = time.perf_counter()
    if set(models) & set(MODEL_NAMES):
        tokens = tokenizer.tokens_many(c.get("fact") or "" for c in cases)
    else:  # the verifier and the intent model do not read the cases' tokens
        tokens = [[] for _ in cases]
    tokenize_s = time.perf_counter() - started
    print(f"tokenized {len(cases)} cases in {tokenize_s:.1f} s (tokenizer {tokenizer.fingerprint()})", flush=True)

    params = {
        "C": args.C, "min_df": args.min_df, "max_features": args.max_features, "bigrams": args.bigrams,
        "calibration_folds": args.calibration_folds, "alpha": args.alpha, "term_balance": args.term_balance,
    }  # fmt: skip
    data_sha256 = file_sha256(args.cases)
    base_metadata = {
        "data_sha256": data_sha256,  # top level: the model registry records it
        "training_data": {
            "path": str(args.cases),
            "sha256": data_sha256,
            "n_cases": len(cases),
            # the cases held out: a retraining from the browser holds out the same (apps/registry/training.py)
            "split": ({"method": "development split (training/devsplit.py)", "dev_split": True, "seed": args.seed}
                      if args.dev_split else {"method": "sha256(seed:id) < holdout", "dev_split": False,
                                              "holdout": args.holdout, "seed": args.seed}),
            "max_train": args.max_train,
        },
        "tokenizer": {
            "class": "lexlib.search.tokenize.Tokenizer",
            "fingerprint": tokenizer.fingerprint(),
            "version": TOKENIZER_VERSION,
        },
        "hyperparameters": params,
        "trainer": "training.statistical",
    }
    if structure:
        base_metadata["training_data"]["statutes_sha256"] = file_sha256(args.statutes)
        base_metadata["training_data"]["checklists_sha256"] = file_sha256(args.checklists)
    results = train_all(
        cases, tokens, out=args.out, holdout=args.holdout, seed=args.seed, base_metadata=base_metadata,
        models=models, max_train=args.max_train, params=params, baselines=baselines, log=lambda s: print(s, flush=True),
        statutes=statutes,
        checklists=load_records(args.checklists) if args.checklists else None,
        interpretations=load_records(args.interpretations) if args.interpretations else None,
        aliases=_aliases(args.aliases),
        split_ids=dev_split_ids(cases, seed=args.seed) if args.dev_split else None,
        tokenize_many=lambda texts: tokenizer.tokens_many(texts),
    )  # fmt: skip
    total_s = time.perf_counter() - total_started
    print()
    print(format_table(results))
    print(f"\ntokenize {tokenize_s:.1f} s; total wall {total_s:.1f} s")
    if args.out is not None:
        report = {
            "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "argv": list(sys.argv[1:] if argv is None else argv),
            "tokenize_s": round(tokenize_s, 2),
            "total_s": round(total_s, 2),
            "models": {
                name: {k: v for k, v in r.items() if k != "model"} for name, r in results.items()
            },
        }
        (args.out / "report.json").write_text(json.dumps(jsonable(report), ensure_ascii=False, indent=1))
        for name, r in results.items():
            print(f"{name}: {r['path']}  model_id {r['model_id']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
