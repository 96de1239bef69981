"""Evaluation runs: the real pipeline over a labelled JSONL set (DESIGN.md §6).

Predictions go through `judgment_compute`, the same service the web's runs use
(without Celery). Every record's prediction and evidence bundles are stored as
they are made, so an interrupted run resumes where it stopped; the statistical
strategy is deterministic, so a resumed run equals an uninterrupted one.

A record of the common case schema carries one label set for the case (CAIL);
the pipeline runs once per named defendant. The metrics follow the paper's
evaluator: one entry per defendant judgment, each against the record's gold set,
the term on the first judgment (apps/evaluation/metrics.py); the per-record union
of the defendants' predictions is stored beside it as a second view.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import logging
import multiprocessing
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections, connections, transaction

from apps.core.jobs import job_claim, job_finish, job_lock
from apps.evaluation import metrics
from apps.evaluation.models import EvaluationCase, EvaluationRun
from worker.agents.agentic import agentic_summary
from worker.agents.names import ABLATIONS
from worker.agents.types import Bundle, CaseInput

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None] | None
# A failed run was interrupted; it is resumed where it stopped.
RESUMABLE = (EvaluationRun.Status.QUEUED, EvaluationRun.Status.FAILED)


class DatasetError(ValueError):
    """The labelled set cannot be evaluated; the message names the line."""


def dataset_read(data: bytes, *, name: str = "") -> list[dict]:
    """Parse and check a labelled JSONL set: every line needs an id, a fact and a charge list."""
    records, seen = [], set()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{name}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{name} line {number}: not JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise DatasetError(f"{name} line {number}: expected an object")
        for key, kind in (("id", str), ("fact", str), ("charges", list)):
            if not isinstance(record.get(key), kind) or (kind is str and not record[key].strip()):
                raise DatasetError(f"{name} line {number}: field {key!r} missing or not a {kind.__name__}")
        if record["id"] in seen:
            raise DatasetError(f"{name} line {number}: duplicate id {record['id']!r}")
        seen.add(record["id"])
        records.append(record)
    if not records:
        raise DatasetError(f"{name}: no records")
    return records


def evaluation_create(*, path: str | Path, label: str = "", strategy: str = "statistical", ablation: str = "full",
                      limit: int | None = None, user=None, exclude_self: bool = False, mode: str = "fixed") -> EvaluationRun:
    from worker.agents.names import MODES, STRATEGIES

    if strategy not in STRATEGIES:
        raise DatasetError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if ablation not in ABLATIONS:
        raise DatasetError(f"unknown ablation {ablation!r}; choose one of {', '.join(ABLATIONS)}")
    if mode not in MODES:
        raise DatasetError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    path = Path(path)
    data = path.read_bytes()
    records = dataset_read(data, name=path.name)
    total = min(len(records), limit) if limit else len(records)
    return EvaluationRun.objects.create(
        label=label or f"{path.stem} {strategy}/{ablation}{'/agentic' if mode == 'agentic' else ''}", dataset=path.name, dataset_path=str(path.resolve()),
        dataset_sha256=hashlib.sha256(data).hexdigest(), strategy=strategy, ablation=ablation, limit=limit,
        total=total, created_by=user, exclude_self=exclude_self, mode=mode)


def _records_of(run: EvaluationRun) -> list[dict]:
    data = Path(run.dataset_path).read_bytes()
    if hashlib.sha256(data).hexdigest() != run.dataset_sha256:
        raise DatasetError(f"{run.dataset_path} changed since run {run.pk} started; start a new run")
    records = dataset_read(data, name=run.dataset)
    return records[:run.limit] if run.limit else records


# --- one record ------------------------------------------------------------------

def record_predict(record: dict, *, strategy: str, ablation: str, exclude_self: bool = False, mode: str = "fixed") -> dict:
    """Run the pipeline on one labelled record; returns the prediction, bundles and time."""
    from apps.judging.services import judgment_compute

    defendants = tuple(d for d in record.get("defendants") or () if d)
    started = time.perf_counter()
    try:
        merged = tuple(d if isinstance(d, str) else d.get("id", "") for d in record.get("duplicates") or ())
        bundles = judgment_compute(case=CaseInput(facts=record["fact"], defendants=defendants, ref=record["id"],
                                                  merged=tuple(m for m in merged if m)),
                                   strategy=strategy, mode=mode, ablation=ablation, exclude_self=exclude_self)
        dicts = [b.to_dict() for b in bundles]
        error = ""
    except Exception as exc:  # an explicit failure of the record, never a default verdict
        log.exception("evaluation of %s failed", record["id"])
        dicts, error = [], f"{type(exc).__name__}: {exc}"
    return {"bundles": dicts, "error": error, "seconds": time.perf_counter() - started}


def _verdict(stored: dict) -> dict:
    """What the scores read of one defendant's bundle (as ``Bundle.to_dict`` stored it)."""
    bundle = Bundle.from_dict(stored)
    judgment = bundle.judgment
    articles = bundle.audit.articles if bundle.audit else []
    status = str(judgment.status) if judgment else "failed"
    supported = {a.key for a in articles if any(i.satisfied for i in a.items)}
    keys = list(judgment.article_keys) if judgment else []
    cited = keys if status == "judged" else []
    term = judgment.term if judgment else None
    return {
        "defendant": bundle.defendant,
        "status": status,
        "charges": list(judgment.charges) if judgment else [],
        "articles": keys,
        "term": dataclasses.asdict(term) if term is not None else None,
        "candidate_articles": [a.key for a in articles],
        "verified_articles": [a.key for a in articles if a.passed],
        "llm_calls": sum(c.llm_calls for c in bundle.costs),
        "prompt_tokens": sum(c.prompt_tokens for c in bundle.costs),
        "completion_tokens": sum(c.completion_tokens for c in bundle.costs),
        "seconds": sum(c.seconds for c in bundle.costs),
        "cited": len(cited),
        "cited_unsupported": sum(1 for k in cited if k not in supported),
        **({"agentic": agentic_summary(bundle)} if bundle.research and bundle.research.steps else {}),
    }


def prediction_of(result: dict) -> dict:
    """The entry-level prediction: union over defendants, the first defendant's term."""
    verdicts = [_verdict(b) for b in result["bundles"]]
    if not verdicts:
        return {"status": "failed", "message": result.get("error", ""), "charges": [], "articles": [], "term": None,
                "candidate_articles": [], "verified_articles": [], "defendants": [], "llm_calls": 0,
                "prompt_tokens": 0, "completion_tokens": 0, "seconds": result["seconds"]}
    statuses = [v["status"] for v in verdicts]
    union = lambda key: list(dict.fromkeys(x for v in verdicts for x in v[key]))  # noqa: E731
    return {
        "status": "judged" if "judged" in statuses else statuses[0],
        "message": "",
        "charges": union("charges"), "articles": union("articles"),
        "term": verdicts[0]["term"],
        "candidate_articles": union("candidate_articles"), "verified_articles": union("verified_articles"),
        "defendants": verdicts,
        "llm_calls": sum(v["llm_calls"] for v in verdicts),
        "prompt_tokens": sum(v["prompt_tokens"] for v in verdicts),
        "completion_tokens": sum(v["completion_tokens"] for v in verdicts),
        "seconds": result["seconds"],
    }


def gold_of(record: dict) -> dict:
    return {"charges": record.get("charges") or [], "articles": record.get("articles") or [],
            "term": record.get("term"), "defendants": record.get("defendants") or []}


# --- the run ---------------------------------------------------------------------

def _predict_in_child(args: tuple[dict, str, str, bool, str]) -> tuple[str, dict]:
    record, strategy, ablation, exclude_self, mode = args
    close_old_connections()
    return record["id"], record_predict(record, strategy=strategy, ablation=ablation, exclude_self=exclude_self,
                                        mode=mode)


def _predictions(todo: list[dict], run: EvaluationRun, workers: int) -> Iterator[tuple[str, dict]]:
    if workers <= 1 or len(todo) < 2:
        for record in todo:
            yield record["id"], record_predict(record, strategy=run.strategy, ablation=run.ablation,
                                               exclude_self=run.exclude_self, mode=run.mode)
        return
    # Children are forked with no open connection: each opens its own (AGE is loaded per connection).
    connections.close_all()
    context = multiprocessing.get_context("fork")
    with context.Pool(workers) as pool:
        yield from pool.imap(_predict_in_child, [(r, run.strategy, run.ablation, run.exclude_self, run.mode) for r in todo],
                             chunksize=1)


def evaluation_claim(*, run_id: int) -> EvaluationRun | None:
    """Start a run, or resume an interrupted (failed) one where it stopped: queued or failed → running
    in one conditional update (apps.core.jobs.job_claim), so of two claims exactly one wins. None when
    the run is running already (another claim won), done, or gone."""
    return job_claim(model=EvaluationRun, pk=run_id, from_status=RESUMABLE, message="")


def evaluation_execute(run: EvaluationRun, *, workers: int = 1, progress: Progress = None,
                       max_seconds: float | None = None) -> EvaluationRun:
    """Predict every record not yet stored, then compute and store the metrics.

    A queued or failed run is claimed first (``evaluation_claim``); a running one is continued: the
    next time slice of its claimer, or a take-over after its process died (the worker holds the run's
    job lock for that, ``evaluation_run_chunk``); a done one only has its metrics computed again.
    With ``max_seconds`` it stops after that much time with the run still running
    (the Celery task continues it in a new task, below the worker's time limit).
    """
    records = _records_of(run)
    evaluation_claim(run_id=run.pk)
    run.refresh_from_db()  # the caller's object follows the run, to its metrics
    if run.status not in (EvaluationRun.Status.RUNNING, EvaluationRun.Status.DONE):
        return run
    done = set(run.cases.values_list("case_id", flat=True))
    todo = [r for r in records if r["id"] not in done]
    position = {r["id"]: i for i, r in enumerate(records)}
    by_id = {r["id"]: r for r in records}
    started = time.perf_counter()
    try:
        for case_id, result in _predictions(todo, run, workers):
            record = by_id[case_id]
            gold, prediction = gold_of(record), prediction_of(result)
            entry = _entry(case_id, gold, prediction)
            with transaction.atomic():
                EvaluationCase.objects.create(
                    run=run, position=position[case_id], case_id=case_id, fact=record["fact"], gold=gold,
                    prediction=prediction, bundles=result["bundles"], status=prediction["status"],
                    charges_correct=bool(metrics.entry_scores(entry)["charges_exact"]), seconds=result["seconds"])
                EvaluationRun.objects.filter(pk=run.pk).update(done=run.cases.count())
            done.add(case_id)
            if progress:
                progress(len(done), len(records))
            if max_seconds is not None and time.perf_counter() - started > max_seconds and len(done) < len(records):
                _add_time(run, time.perf_counter() - started)
                run.refresh_from_db()
                return run
    except BaseException as exc:
        # Interrupted (Ctrl-C, a crash): the stored predictions stay; `evaluate --resume` continues.
        _add_time(run, time.perf_counter() - started)
        job_finish(model=EvaluationRun, pk=run.pk, status=EvaluationRun.Status.FAILED,
                   message=f"interrupted after {len(done)} of {len(records)}: {type(exc).__name__}: {exc}"[:2000])
        raise
    _add_time(run, time.perf_counter() - started)
    run.refresh_from_db()
    job_finish(model=EvaluationRun, pk=run.pk, status=EvaluationRun.Status.DONE,
               from_status=(EvaluationRun.Status.RUNNING, EvaluationRun.Status.DONE),
               metrics=metrics_compute(run), versions=_versions(run))
    run.refresh_from_db()
    return run


def _add_time(run: EvaluationRun, seconds: float) -> None:
    from django.db.models import F

    EvaluationRun.objects.filter(pk=run.pk).update(seconds=F("seconds") + seconds)


def _versions(run: EvaluationRun) -> dict:
    first = run.cases.exclude(bundles=[]).first()
    return Bundle.from_dict(first.bundles[0]).versions if first else {}


def _entry(case_id: str, gold: dict, prediction: dict) -> metrics.Entry:
    """The per-record entry: the union of the defendants' predictions, the first defendant's term."""
    verdicts = prediction.get("defendants", [])
    return metrics.Entry(
        id=case_id, gold_charges=gold["charges"], gold_articles=gold["articles"], gold_term=gold["term"],
        pred_charges=prediction["charges"], pred_articles=prediction["articles"], pred_term=prediction["term"],
        candidate_articles=prediction["candidate_articles"], verified_articles=prediction["verified_articles"],
        status=prediction["status"], defendants=max(1, len(verdicts)),
        llm_calls=prediction["llm_calls"], prompt_tokens=prediction["prompt_tokens"],
        completion_tokens=prediction["completion_tokens"], seconds=prediction["seconds"],
        cited=sum(v.get("cited", 0) for v in verdicts), cited_unsupported=sum(v.get("cited_unsupported", 0) for v in verdicts))


def defendant_entries(case_id: str, gold: dict, prediction: dict) -> list[metrics.Entry]:
    """The paper's entries: one per defendant judgment, each against the record's gold set; the term is
    scored on the first judgment only. A record that produced no judgment at all gives one failed entry
    per named defendant."""
    verdicts = prediction.get("defendants") or [
        {"status": prediction["status"], "charges": [], "articles": [], "term": None, "candidate_articles": [],
         "verified_articles": [], "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0}
        for _ in (gold.get("defendants") or [""])]
    return [metrics.Entry(
        id=f"{case_id}#{n}", gold_charges=gold["charges"], gold_articles=gold["articles"],
        gold_term=gold["term"] if n == 0 else None, pred_charges=v["charges"], pred_articles=v["articles"],
        pred_term=v["term"], candidate_articles=v["candidate_articles"], verified_articles=v["verified_articles"],
        status=v["status"], defendants=1, llm_calls=v["llm_calls"], prompt_tokens=v["prompt_tokens"],
        completion_tokens=v["completion_tokens"], seconds=v["seconds"], cited=v.get("cited", 0),
        cited_unsupported=v.get("cited_unsupported", 0)) for n, v in enumerate(verdicts)]


def charge_categories() -> dict[str, list[str]]:
    """Category title → charges, from the corpus (imported from charge_categories.json)."""
    from apps.corpus.models import Charge

    categories: dict[str, list[str]] = {}
    for name, cats in Charge.objects.exclude(categories=[]).values_list("name", "categories"):
        for title in cats:
            categories.setdefault(title, []).append(name)
    return categories


def training_counts(versions: dict) -> dict[str, int] | None:
    """Training cases per charge label of the charge model behind a run (its artefact's label counts)."""
    from apps.registry.models import ModelVersion
    from apps.registry.services import _load

    model_id = (versions or {}).get("charge_model")
    version = ModelVersion.objects.filter(kind=ModelVersion.Kind.CHARGES, model_id=model_id).first() if model_id else None
    if version is None:
        return None
    try:
        model = _load(version.kind, version.model_id, version.artefact_dir)
    except (OSError, ValueError):
        return None
    return {str(k): int(v) for k, v in (model.metadata.get("label_counts") or {}).items()}


def metrics_compute(run: EvaluationRun) -> dict:
    records = [{"record_entry": _entry(c.case_id, c.gold, c.prediction),
                "defendant_entries": defendant_entries(c.case_id, c.gold, c.prediction)}
               for c in run.cases.order_by("position")]
    result = metrics.evaluate_protocols(records, charge_categories(), training_counts(_versions(run)))
    result["wall_seconds"] = round(run.seconds, 1)
    if run.mode == "agentic":
        result["agentic"] = agentic_metrics([c.prediction for c in run.cases.order_by("position")])
    return result


def agentic_metrics(predictions: list[dict]) -> dict:
    """Planner steps, searches and planner LLM calls per defendant, and how often a cap ended the loop."""
    rows = [d["agentic"] for p in predictions for d in p.get("defendants") or [] if d.get("agentic")]
    if not rows:
        return {"defendants": 0}
    n = len(rows)
    return {"defendants": n, "steps_per_defendant": round(sum(r["steps"] for r in rows) / n, 3),
            "searches_per_defendant": round(sum(r["searches"] for r in rows) / n, 3),
            "planner_calls_per_defendant": round(sum(r["planner_calls"] for r in rows) / n, 3),
            "capped_share": round(sum(1 for r in rows if r["capped"]) / n, 4)}


def metrics_write(run: EvaluationRun, directory: str | Path | None = None) -> tuple[Path, Path]:
    """metrics.json and metrics.csv (overall + per category, the paper's layout)."""
    directory = Path(directory or Path(settings.MEDIA_ROOT) / "evaluations" / str(run.pk))
    directory.mkdir(parents=True, exist_ok=True)
    summary = {"run": run.pk, "label": run.label, "dataset": run.dataset, "dataset_sha256": run.dataset_sha256,
               "strategy": run.strategy, "ablation": run.ablation, "mode": run.mode, "cases": run.done, "versions": run.versions,
               "metrics": run.metrics}
    json_path = directory / "metrics.json"
    json_path.write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
    rows = metrics.metrics_rows(run.metrics, run.label)
    csv_path = directory / "metrics.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(metrics.ROW_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return json_path, csv_path


def evaluation_compare(runs: list[EvaluationRun]) -> list[dict]:
    """Side-by-side metric rows; deltas are against the first run."""
    return metrics.compare({f"#{r.pk} {r.label}": r.metrics for r in runs})


@transaction.atomic
def evaluation_mark_reference(run: EvaluationRun) -> None:
    if run.status != EvaluationRun.Status.DONE:
        raise DatasetError("only a finished run can be the reference")
    EvaluationRun.objects.filter(is_reference=True).update(is_reference=False)
    EvaluationRun.objects.filter(pk=run.pk).update(is_reference=True)


def evaluation_upload(*, data: bytes, filename: str, strategy: str, ablation: str, limit: int | None,
                      label: str, user) -> EvaluationRun:
    """An admin's labelled set: checked, kept under MEDIA_ROOT by content hash, evaluated by the worker."""
    dataset_read(data, name=filename)  # a clear error now rather than in the worker
    digest = hashlib.sha256(data).hexdigest()
    directory = Path(settings.MEDIA_ROOT) / "evaluation-sets"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{digest[:16]}-{Path(filename).name}"
    if not path.exists():
        path.write_bytes(data)
    run = evaluation_create(path=path, label=label or f"{Path(filename).stem} {strategy}/{ablation}",
                            strategy=strategy, ablation=ablation, limit=limit, user=user)
    from worker.tasks import training_evaluation_run

    transaction.on_commit(lambda: training_evaluation_run.delay(run.pk))
    return run


def evaluation_run_chunk(run_id: int) -> bool:
    """The worker's step: continue the run for a while; True when more remains. The run's job lock keeps
    a second delivery out while one predicts; the claim in ``evaluation_execute`` starts it once."""
    with job_lock("evaluation", run_id) as mine:
        if not mine:  # another delivery is predicting this run; it continues it
            return False
        run = EvaluationRun.objects.filter(pk=run_id).first()
        if run is None or run.status == EvaluationRun.Status.DONE:
            return False
        limit = max(60, settings.CELERY_TASK_SOFT_TIME_LIMIT - 120)
        try:
            run = evaluation_execute(run, max_seconds=limit)
        except DatasetError as exc:
            job_finish(model=EvaluationRun, pk=run_id, status=EvaluationRun.Status.FAILED, message=str(exc),
                       from_status=(EvaluationRun.Status.QUEUED, EvaluationRun.Status.RUNNING))
            return False
        if run.status == EvaluationRun.Status.DONE:
            metrics_write(run)
            return False
        return run.status == EvaluationRun.Status.RUNNING
