"""Relational source of truth for the Ontology graph (features, kNN, communities).

The Fact and Rule graphs come straight from apps.corpus. Everything here can
be rebuilt from the corpus; the AGE graph `hierargraph` is a projection of
both, rebuilt or updated in the same transaction as the rows it mirrors.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from apps.corpus.models import Precedent


class Dimension(models.TextChoices):
    DEFENDANT = "defendant", _("defendant attributes")
    BEHAVIOUR = "behaviour", _("criminal behaviour")
    VICTIM = "victim", _("victim and property")
    MENTAL = "mental", _("mental state and remorse")


class Feature(models.Model):
    dimension = models.CharField(max_length=16, choices=Dimension.choices)
    name = models.CharField(max_length=60)

    class Meta:
        ordering = ["dimension", "name"]
        constraints = [models.UniqueConstraint(fields=["dimension", "name"], name="feature_unique")]

    def __str__(self) -> str:
        return f"{self.get_dimension_display()}: {self.name}"


class CaseFeatures(models.Model):
    precedent = models.OneToOneField(Precedent, on_delete=models.CASCADE, related_name="ontology")
    features = models.ManyToManyField(Feature, related_name="cases", blank=True)
    text = models.TextField(help_text=_("the four dimensions joined: the ontology-aligned text that is embedded"))
    extractor = models.CharField(max_length=80, help_text=_("strategy and version that produced the features"))
    created_at = models.DateTimeField(auto_now_add=True)


class Similarity(models.Model):
    """A SIMILAR_TO edge: ``target`` is among the k nearest cases of ``source``."""

    source = models.ForeignKey(Precedent, on_delete=models.CASCADE, related_name="similar_out")
    target = models.ForeignKey(Precedent, on_delete=models.CASCADE, related_name="similar_in")
    score = models.FloatField()
    rank = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["source_id", "rank"]
        constraints = [models.UniqueConstraint(fields=["source", "target"], name="similarity_unique")]


class Community(models.Model):
    level = models.PositiveSmallIntegerField(default=0)
    number = models.PositiveIntegerField()
    size = models.PositiveIntegerField(default=0)
    summary = models.TextField()
    top_charges = models.JSONField(default=list)
    top_features = models.JSONField(default=list)
    representatives = models.JSONField(default=list, help_text=_("precedent pks"))
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    members = models.ManyToManyField(Precedent, through="CommunityMembership", related_name="communities")

    class Meta:
        ordering = ["level", "number"]
        constraints = [models.UniqueConstraint(fields=["level", "number"], name="community_number")]

    def __str__(self) -> str:
        return f"C{self.level}.{self.number} ({self.size})"


class CommunityMembership(models.Model):
    community = models.ForeignKey(Community, on_delete=models.CASCADE)
    precedent = models.ForeignKey(Precedent, on_delete=models.CASCADE, related_name="memberships")
    assigned = models.CharField(max_length=16, default="leiden", help_text=_("leiden, or incremental (kNN majority)"))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["precedent", "community"], name="membership_unique")]


class GraphBuild(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        FAILED = "failed", _("failed")

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    params = models.JSONField(default=dict)
    stats = models.JSONField(default=dict)
    timings = models.JSONField(default=dict)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
