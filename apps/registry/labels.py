"""The registry's words as an administrator reads them, in the page language: a model's kind, its held-out
metric, and what a training run came to. The stored values stay the training code's names (``mae_months``) and
the English line of ``TrainingRun.message`` (logs and the admin site)."""

from __future__ import annotations

from django.utils.translation import gettext, gettext_lazy

from apps.registry.models import ModelVersion, TrainingRun

METRIC_LABELS = {
    "exact_set_accuracy": gettext_lazy("exact-set accuracy"),
    "mae_months": gettext_lazy("term MAE (months)"),
    "roc_auc": gettext_lazy("ROC AUC"),
    "accuracy": gettext_lazy("accuracy"),
    "weighted_exact_articles": gettext_lazy("exact articles (each charge weighing the same)"),
}


def metric_label(name: str | None) -> str:
    """A metric's name for reading; a name not listed is shown as it is."""
    return str(METRIC_LABELS.get(name, name)) if name else "—"


def kind_label(kind: str) -> str:
    try:
        return str(ModelVersion.Kind(kind).label)
    except ValueError:
        return kind


def headline(metrics: dict | None) -> str:
    """"exact-set accuracy 0.5556": a version's primary held-out metric and its value."""
    name = (metrics or {}).get("primary_metric")
    value = (metrics or {}).get(name) if name else None
    if not isinstance(value, (int, float)):
        return metric_label(name)
    return f"{metric_label(name)} {value:.4f}"


def training_outcome(run: TrainingRun) -> str:
    """What a finished training run came to. A failure keeps its error text (for whoever fixes it)."""
    if run.status == TrainingRun.Status.PROMOTED:
        return gettext("Every model is at least as good as the active one on the same held-out cases: activated.")
    if run.status == TrainingRun.Status.REJECTED:
        worse = "、".join(kind_label(row.get("kind", "")) for row in run.gate or [] if not row.get("passed"))
        return gettext("Refused: worse than the active model on the same held-out cases: %(models)s. Nothing was "
                       "activated.") % {"models": worse or "—"}
    return run.message
