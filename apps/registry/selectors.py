"""Reads of the model registry for pages outside it."""

from __future__ import annotations

from apps.registry.models import ModelVersion

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
