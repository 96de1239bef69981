"""Register trained artefacts and switch the active version of a kind atomically."""

from __future__ import annotations

import uuid
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.db import transaction

from apps.audit.services import audit_append
from apps.registry.models import ModelVersion
from worker.agents.models.auditor import ArticleAuditor
from worker.agents.models.textmodel import LinearTextModel, TermModel
from worker.agents.models.verifier import ChecklistVerifier

LOADERS = {ModelVersion.Kind.CHARGES: LinearTextModel, ModelVersion.Kind.ARTICLES: LinearTextModel,
           ModelVersion.Kind.TERM: TermModel, ModelVersion.Kind.VERIFIER: ChecklistVerifier,
           ModelVersion.Kind.INTENT: LinearTextModel, ModelVersion.Kind.AUDITOR: ArticleAuditor}


def model_register(*, kind: str, directory: str | Path, activate: bool = True, user=None) -> ModelVersion:
    """Verify an artefact (content hash) and record it; optionally make it the active one of its kind."""
    model = LOADERS[kind].load(directory)
    metadata = getattr(model, "metadata", {}) or {}
    version = ModelVersion.objects.create(kind=kind, model_id=model.model_id, artefact_dir=str(directory),
                                          metrics=metadata.get("metrics", {}),
                                          data_fingerprint=str(metadata.get("data_sha256", ""))[:64])
    if activate:
        model_activate(version=version, user=user)
    return version


@transaction.atomic
def model_activate(*, version: ModelVersion, user=None) -> None:
    previous = ModelVersion.objects.filter(kind=version.kind, active=True).values_list("pk", flat=True).first()
    ModelVersion.objects.filter(kind=version.kind, active=True).exclude(pk=version.pk).update(active=False)
    version.active = True
    version.activated_by = user if user is not None and user.is_authenticated else None
    version.save(update_fields=["active", "activated_by"])
    audit_append(action="model.activate", obj=version, actor=user, before={"kind": version.kind, "active_id": previous},
                 after={"kind": version.kind, "active_id": version.pk, "model_id": version.model_id})


@lru_cache(maxsize=8)
def _load(kind: str, model_id: str, directory: str):
    return LOADERS[kind].load(directory, expected_id=model_id)


def load_active_models() -> dict:
    """kind → loaded model for every kind with an active version (cached per process by model id)."""
    return {v.kind: _load(v.kind, v.model_id, v.artefact_dir) for v in ModelVersion.objects.filter(active=True)}


def statistical_models_train(*, cases: str | Path, out: str | Path | None = None, extra_args: list[str] = (),
                             statutes: str | Path | None = None, checklists: str | Path | None = None,
                             auditor: bool = True, auditor_workers: int = 1, auditor_per_charge: int | None = None) -> dict:
    """Run the offline training job (a separate process: nothing imports training/) and register its models
    (the verifier and the intent classifier too when ``statutes`` and ``checklists`` are given)."""
    # A fresh directory per run: registered artefacts are never overwritten (several
    # databases may share MEDIA_ROOT, and a loader checks each artefact's hash).
    from apps.registry.training import statistical_training_run

    out = Path(out or Path(settings.MEDIA_ROOT) / "models" / f"statistical-{uuid.uuid4().hex}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    _report, output = statistical_training_run(cases=Path(cases), out=out, statutes=statutes, checklists=checklists,
                                               extra_args=list(extra_args), auditor=auditor,
                                               auditor_workers=auditor_workers, auditor_per_charge=auditor_per_charge)
    print(output, end="")
    registered = {}
    for kind in ModelVersion.Kind.values:
        directory = out / kind
        if directory.is_dir():
            registered[kind] = model_register(kind=kind, directory=directory)
    return registered
