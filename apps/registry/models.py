"""The model registry: which trained artefacts the agents use.

Artefacts come only from our own training jobs (training/), are stored as
JSON + .npy (never pickles) and carry a content hash that is checked on load.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from apps.core.models import Job, JobStatus, job_status_field, job_statuses


class ModelVersion(models.Model):
    class Kind(models.TextChoices):
        CHARGES = "charges", _("charge classifier")
        ARTICLES = "articles", _("article classifier")
        TERM = "term", _("term model")
        VERIFIER = "verifier", _("checklist-item verifier")
        INTENT = "intent", _("intent classifier")
        AUDITOR = "auditor", _("article Auditor")

    kind = models.CharField(max_length=16, choices=Kind.choices)
    model_id = models.CharField(max_length=200)
    artefact_dir = models.CharField(max_length=500)
    metrics = models.JSONField(default=dict)
    data_fingerprint = models.CharField(max_length=64, blank=True)
    active = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    activated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["kind"], condition=Q(active=True), name="one_active_model_per_kind")]

    def __str__(self) -> str:
        return f"{self.kind} {self.model_id}{' (active)' if self.active else ''}"


class TrainingRun(Job):
    """One retraining of the statistical models, its held-out report and the promotion gate. A job
    (apps/core/models.py) whose success is promoted or rejected by the gate."""

    Status = job_statuses(JobStatus.PROMOTED, JobStatus.REJECTED, JobStatus.FAILED)

    status = job_status_field(Status)
    source = models.CharField(max_length=500, help_text=_("training cases: 'corpus' (exported from the database) or a file"))
    data_sha256 = models.CharField(max_length=64, blank=True)
    n_cases = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, help_text=_("held-out metrics of every trained model and of the active one"))
    gate = models.JSONField(default=list, help_text=_("per model: candidate vs active on the same held-out cases"))
    log_tail = models.TextField(blank=True)
    versions = models.ManyToManyField(ModelVersion, blank=True, related_name="training_runs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    def __str__(self) -> str:
        return f"training {self.pk} ({self.status})"
