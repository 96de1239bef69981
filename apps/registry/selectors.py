"""Reads of the model registry: are the active models trained on the current corpus (the models
page), and how often were the models behind a judgment right on held-out cases (pages outside it)."""

from __future__ import annotations

from apps.registry.models import ModelVersion, TrainingRun

# Counts of a published import that mean it changed what the models learn from.
CHANGING_COUNTS = ("added", "amended", "checklists", "replaced", "categorised", "aliases")


def _changed_the_corpus(counts: dict) -> bool:
    return any(counts.get(key) for key in CHANGING_COUNTS)


def models_freshness() -> dict:
    """The corpus version (the last import that changed it) the active models were trained on,
    against the current one.

    A model trained by a TrainingRun saw the corpus as it was when that run started (it exports
    the corpus first); a model registered otherwise (train_statistical on files) counts from its
    registration. An import published after that makes the models stale: "retrain needed".
    """
    from apps.corpus.models import ImportBatch

    active = list(ModelVersion.objects.filter(active=True).prefetch_related("training_runs"))
    running = TrainingRun.objects.filter(status__in=(TrainingRun.Status.QUEUED, TrainingRun.Status.RUNNING)).first()
    changing = [b for b in ImportBatch.objects.filter(status=ImportBatch.Status.PUBLISHED).order_by("finished_at")
                if _changed_the_corpus(b.counts)]
    current = changing[-1] if changing else None
    if not active:
        return {"state": "none", "current": current, "running": running, "since": [], "trained_at": None}
    trained_at = min(_trained_at(v) for v in active)
    since = [b for b in changing if b.finished_at and b.finished_at > trained_at]
    trained_on = next((b for b in reversed(changing) if b.finished_at and b.finished_at <= trained_at), None)
    state = "stale" if since else "fresh"
    return {"state": state, "trained_at": trained_at, "trained_on": trained_on, "current": current, "since": since,
            "precedents_added": sum(b.counts.get("added", 0) for b in since if b.kind == "case"),
            "running": running}


def models_current() -> bool:
    """Every kind of statistical model has an active version, trained after the last import that changed the corpus."""
    kinds = set(ModelVersion.objects.filter(active=True).values_list("kind", flat=True))
    return set(ModelVersion.Kind.values) <= kinds and models_freshness()["state"] == "fresh"


def _trained_at(version: ModelVersion):
    runs = [r.started_at for r in version.training_runs.all() if r.started_at]
    return min(runs) if runs else version.created_at


# Which key of a bundle's ``versions`` names which registered model.
VERSION_KEYS = {"charge_model": ModelVersion.Kind.CHARGES, "article_model": ModelVersion.Kind.ARTICLES,
                "term_model": ModelVersion.Kind.TERM, "verifier": ModelVersion.Kind.VERIFIER}


def model_scores(versions: dict) -> dict:
    """How often the models behind a judgment were right on their held-out cases, for a reader:
    ``{"charges": {"pct", "n"}, "articles": {...}, "term_mae": {"months", "n"}, "verifier": {...}}``,
    only for the models the judgment used and whose held-out metrics are recorded."""
    ids = {key: value for key, value in (versions or {}).items() if key in VERSION_KEYS and value}
    if not ids:
        return {}
    found = {(v.kind, v.model_id): v.metrics or {} for v in ModelVersion.objects.filter(model_id__in=ids.values())}
    out: dict = {}
    for key, model_id in ids.items():
        kind = VERSION_KEYS[key]
        metrics = found.get((kind, model_id))
        if not metrics or not metrics.get("n"):
            continue
        if kind in (ModelVersion.Kind.CHARGES, ModelVersion.Kind.ARTICLES) and metrics.get("exact_set_accuracy") is not None:
            out[kind] = {"pct": round(100 * metrics["exact_set_accuracy"]), "n": metrics["n"]}
        elif kind == ModelVersion.Kind.TERM and metrics.get("mae_months") is not None:
            out["term_mae"] = {"months": round(metrics["mae_months"]), "n": metrics["n"]}
        elif kind == ModelVersion.Kind.VERIFIER and metrics.get("accuracy") is not None:
            out[kind] = {"pct": round(100 * metrics["accuracy"]), "n": metrics["n"]}
    return out
