"""The model registry: which trained artefacts the agents use.

Artefacts come only from our own training jobs (training/), are stored as
JSON + .npy (never pickles) and carry a content hash that is checked on load.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class ModelVersion(models.Model):
    class Kind(models.TextChoices):
        CHARGES = "charges", _("charge classifier")
        ARTICLES = "articles", _("article classifier")
        TERM = "term", _("term model")

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
