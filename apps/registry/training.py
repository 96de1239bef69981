"""Retraining from the browser: export the corpus's labelled precedents, train in a separate
process on the worker's training queue, and promote only models that are not worse.

The gate: each new model and the currently active model of its kind are evaluated by the
training job on the same held-out cases with the same evaluator; a model whose primary
metric is worse than the active one's by more than the tolerance is refused, and then
none of the run's models is activated (they are kept, inactive, for inspection).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction

from apps.core.jobs import job_claim, job_finish
from apps.registry.models import ModelVersion, TrainingRun
from apps.registry.services import model_activate, model_register

# Allowed loss on the primary metric before a model is refused (absolute units of the metric).
GATE_TOLERANCE = {"exact_set_accuracy": 0.005, "mae_months": 0.25, "roc_auc": 0.005, "weighted_exact_articles": 0.01}
KINDS = tuple(ModelVersion.Kind.values)


def training_cases_export(path: Path) -> int:
    """Write the labelled precedents of the corpus as JSONL in the shared case schema; returns the count."""
    from apps.corpus.models import Precedent

    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for p in Precedent.objects.prefetch_related("outcomes__charges", "outcomes__articles").order_by("ext_id").iterator(chunk_size=500):
            outcomes = list(p.outcomes.all())
            charges = sorted({c.name for o in outcomes for c in o.charges.all()})
            if not charges:
                continue
            articles = sorted({a.number for o in outcomes for a in o.articles.all()} |
                              {n for o in outcomes for n in o.unresolved_articles})
            record = {"id": p.ext_id, "source": p.source, "fact": p.fact, "defendants": list(p.defendants),
                      "charges": charges, "articles": articles, "term": None, "label_source": p.label_source}
            if len(outcomes) == 1 and outcomes[0].term_known:
                o = outcomes[0]
                record["term"] = {"months": o.term_months or 0, "life": o.life, "death": o.death}
            elif len(outcomes) > 1:
                record["per_defendant"] = [{"name": o.defendant, "charges": sorted(c.name for c in o.charges.all()),
                                            "term": ({"months": o.term_months or 0, "life": o.life, "death": o.death}
                                                     if o.term_known else None)} for o in outcomes]
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def training_structure_export(directory: Path) -> tuple[Path, Path]:
    """Write the statutes (latest version of each article) and their main checklists in the shared schema,
    for the verifier and the intent classifier; returns (statutes path, checklists path). Beside them:
    interpretations.jsonl (paragraphs with the Criminal Law articles they interpret) and aliases.json
    (dataset charge name → statute charge), which make the legal training documents (training/longtail.py),
    and charges.txt (every charge name: the words the serving tokenizer adds)."""
    from apps.corpus.models import Article, Charge, Interpretation

    with (directory / "interpretations.jsonl").open("w", encoding="utf-8") as out:
        for i in Interpretation.objects.prefetch_related("articles").order_by("ext_id").iterator(chunk_size=200):
            numbers = sorted({a.number for a in i.articles.all()})
            out.write(json.dumps({"id": i.ext_id, "text": i.text, "articles": numbers}, ensure_ascii=False) + "\n")
    aliases = dict(Charge.objects.filter(canonical__isnull=False).values_list("name", "canonical__name"))
    # Every charge name, as the serving tokenizer adds them (apps.corpus.search_service.legal_tokenizer).
    names = sorted(Charge.objects.values_list("name", flat=True))
    (directory / "charges.txt").write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    (directory / "aliases.json").write_text(json.dumps({"aliases": aliases}, ensure_ascii=False), encoding="utf-8")

    statutes, checklists = directory / "statutes.jsonl", directory / "checklists.jsonl"
    articles = Article.objects.prefetch_related("versions__checklist", "charges").order_by("number", "sub")
    with statutes.open("w", encoding="utf-8") as s_out, checklists.open("w", encoding="utf-8") as c_out:
        for article in articles.iterator(chunk_size=200):
            versions = sorted(article.versions.all(), key=lambda v: (v.valid_from is not None, v.valid_from, v.pk))
            if not versions:
                continue
            v = versions[-1]
            charges = sorted(c.name for c in article.charges.all())
            s_out.write(json.dumps({"number": article.number, "sub": article.sub, "key": article.key, "label": article.label,
                                    "text": v.text, "part": v.part, "chapter": v.chapter, "section": v.section or None,
                                    "topic": v.topic or None, "repealed": v.repealed, "charges": charges},
                                   ensure_ascii=False) + "\n")
            items = [i.question for i in sorted(v.checklist.all(), key=lambda i: i.order) if i.variant == "main"]
            if items:
                c_out.write(json.dumps({"article": article.number, "sub": article.sub, "key": article.key, "items": items,
                                        "charges": charges}, ensure_ascii=False) + "\n")
    return statutes, checklists


def statistical_training_run(*, cases: Path, out: Path, statutes: Path | None = None, checklists: Path | None = None,
                             extra_args: list[str] = (), baselines: list[str] = (), auditor: bool = True,
                             auditor_workers: int = 1, auditor_per_charge: int | None = None) -> tuple[dict, str]:
    """Train every statistical model into ``out``; returns (the report of training.statistical with the
    Auditor's entry added, the jobs' output).

    1. ``python -m training.statistical`` (a separate process): the classifiers, their out-of-fold models
       under ``out/folds``, the term model, the item verifier and the intent classifier;
    2. the Auditor's rows: the pipeline over a sample of the training cases with the out-of-fold models
       (apps/registry/auditor_export.py, here: it needs the graph and the indexes);
    3. ``python -m training.auditor`` fits the learned Auditor on them (with the active one as baseline).
    The out-of-fold models are removed at the end.
    """
    import shutil

    exported_statutes, exported_checklists = training_structure_export(out)
    statutes = statutes or exported_statutes
    checklists = checklists or exported_checklists
    structure = (["--statutes", str(statutes), "--checklists", str(checklists)]
                 if Path(statutes).stat().st_size and Path(checklists).stat().st_size else [])
    structure += ["--interpretations", str(out / "interpretations.jsonl"), "--aliases", str(out / "aliases.json"),
                  "--charges", str(out / "charges.txt")]
    done = subprocess.run([sys.executable, "-m", "training.statistical", "--cases", str(cases), "--out", str(out),
                           *structure, *extra_args, *[b for b in baselines if not b.startswith("--baseline=auditor=")]],
                          cwd=settings.BASE_DIR, capture_output=True, text=True)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"the training job exited with {done.returncode}: {output[-2000:]}")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    if auditor:
        output += auditor_training_run(cases=cases, out=out, report=report, baselines=baselines, workers=auditor_workers,
                                       per_charge=auditor_per_charge)
    shutil.rmtree(out / "folds", ignore_errors=True)
    (out / "report.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return report, output


def auditor_training_run(*, cases: Path, out: Path, report: dict, baselines: list[str] = (), workers: int = 1,
                         per_charge: int | None = None) -> str:
    """Stages 2 and 3 on the output of stage 1 (its out-of-fold models in ``out/folds``): the Auditor's
    rows, then its fit; adds its entry to ``report`` and returns the jobs' output."""
    from apps.registry.auditor_export import PER_CHARGE, auditor_rows_export

    output = ""
    if (out / "folds" / "charges.json").is_file():
        records = [json.loads(line) for line in Path(cases).read_text(encoding="utf-8").splitlines() if line.strip()]
        counts = auditor_rows_export(out=out, cases=records, rows_path=out / "auditor-rows.jsonl", workers=workers,
                                     per_charge=per_charge or PER_CHARGE)
        output += f"\nauditor rows: {counts}\n"
        baseline = [b.split("=", 2)[2] for b in baselines if b.startswith("--baseline=auditor=")]
        fitted = subprocess.run([sys.executable, "-m", "training.auditor", "--rows", str(out / "auditor-rows.jsonl"),
                                 "--out", str(out / "auditor"), "--report", str(out / "auditor-report.json"),
                                 *(["--baseline", baseline[0]] if baseline else [])],
                                cwd=settings.BASE_DIR, capture_output=True, text=True)
        output += fitted.stdout + fitted.stderr
        if fitted.returncode == 0:
            report["models"]["auditor"] = json.loads((out / "auditor-report.json").read_text(encoding="utf-8"))
        else:  # too few rows (a tiny corpus): no Auditor; the strategy says it decides without one
            output += f"\nthe Auditor was not trained (exit {fitted.returncode})\n"
    return output


def held_out_args(active) -> list[str]:
    """The training job's arguments that hold out the cases the active models held out: the gate compares a candidate
    and the active model on cases neither trained on. `make demo` trains on a hash split (its corpus is too small for
    the development split), and a retraining on the development split compared the candidate with a model that had
    trained on most of those cases (in the demo: 1.0 against 0.76, refused). Models that do not record their split
    (before 2026-12-06) get the default, the development split."""
    version = next((v for v in active if v.kind == ModelVersion.Kind.CHARGES), None)
    try:
        model = json.loads((Path(version.artefact_dir) / "model.json").read_text(encoding="utf-8")) if version else {}
    except (OSError, ValueError):
        return []
    split = ((model.get("metadata") or {}).get("training_data") or {}).get("split") or {}
    if split.get("dev_split") is False:
        return ["--no-dev-split", "--holdout", str(split["holdout"]), "--seed", str(split["seed"])]
    return []


def training_request(*, user=None, source: str = "corpus") -> TrainingRun:
    """Queue a retraining (the worker's training queue) after the transaction commits."""
    from worker.tasks import training_statistical_run

    run = TrainingRun.objects.create(source=source, requested_by=user if user is not None and user.is_authenticated else None)
    transaction.on_commit(lambda: training_statistical_run.delay(run.pk))
    return run


def _claim(run_id: int) -> TrainingRun | None:
    """None for a duplicate or redelivered task (the run is no longer queued)."""
    return job_claim(model=TrainingRun, pk=run_id)


def _finish(run: TrainingRun, status: str, message: str) -> TrainingRun:
    """The run's end with everything it found out (the gate's verdict, or the failure)."""
    job_finish(model=TrainingRun, pk=run.pk, status=status, message=message,
               **{f: getattr(run, f) for f in ("n_cases", "data_sha256", "report", "gate", "log_tail")})
    run.refresh_from_db()
    return run


def gate_rows(report: dict) -> list[dict]:
    """Per model: the primary metric of the candidate and of the active model on the same cases."""
    rows = []
    for kind, result in (report.get("models") or {}).items():
        metrics, baseline = result.get("metrics") or {}, result.get("baseline_metrics")
        name = metrics.get("primary_metric")
        if not name:
            continue
        higher = bool(metrics.get("higher_is_better", True))
        new = metrics.get(name)
        old = baseline.get(name) if baseline else None
        tolerance = GATE_TOLERANCE.get(name, 0.0)
        worse = old is not None and new is not None and ((new < old - tolerance) if higher else (new > old + tolerance))
        rows.append({"kind": kind, "metric": name, "higher_is_better": higher, "candidate": new, "active": old,
                     "tolerance": tolerance, "passed": not worse})
    return rows


def training_execute(run_id: int) -> TrainingRun | None:
    """The worker's job: export, train (subprocess), register, gate, promote or refuse."""
    run = _claim(run_id)
    if run is None:
        return None
    out = Path(settings.MEDIA_ROOT) / "models" / f"statistical-{uuid.uuid4().hex}"
    out.mkdir(parents=True, exist_ok=True)
    try:
        if run.source == "corpus":
            cases = out / "training-cases.jsonl"
            run.n_cases = training_cases_export(cases)
        else:
            cases = Path(run.source)
            run.n_cases = sum(1 for line in cases.open(encoding="utf-8") if line.strip())
        if run.n_cases == 0:
            raise ValueError("the corpus has no labelled precedent to train on")
        run.data_sha256 = hashlib.sha256(cases.read_bytes()).hexdigest()
        active = ModelVersion.objects.filter(active=True)
        baselines = [f"--baseline={v.kind}={v.artefact_dir}" for v in active]
        try:
            run.report, output = statistical_training_run(cases=cases, out=out, baselines=baselines,
                                                          extra_args=held_out_args(active))
        except RuntimeError as exc:
            run.log_tail = str(exc)[-8000:]
            raise
        run.log_tail = output[-8000:]
        run.gate = gate_rows(run.report)
        with transaction.atomic():
            versions = [model_register(kind=kind, directory=out / kind, activate=False)
                        for kind in KINDS if (out / kind).is_dir()]
            run.versions.set(versions)
            if all(row["passed"] for row in run.gate):
                for version in versions:
                    model_activate(version=version, user=run.requested_by)
                return _finish(run, TrainingRun.Status.PROMOTED, "every model is at least as good as the active one "
                                                                 "on the same held-out cases; activated")
            refused = ", ".join(f"{r['kind']} ({r['metric']} {r['candidate']:.4f} vs active {r['active']:.4f})"
                                for r in run.gate if not r["passed"])
            return _finish(run, TrainingRun.Status.REJECTED,
                           f"refused: worse than the active model: {refused}; nothing was activated")
    except Exception as exc:
        return _finish(run, TrainingRun.Status.FAILED, f"{type(exc).__name__}: {exc}"[:2000])
