"""Evaluation runs: the real pipeline over a labelled case file, every prediction kept."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import Job, JobStatus, job_status_field, job_statuses


class EvaluationRun(Job):
    """A job (apps/core/models.py) continued over several tasks: queued, running, done or failed (a
    failed run is resumed where it stopped)."""

    Status = job_statuses(JobStatus.DONE, JobStatus.FAILED)

    label = models.CharField(max_length=200)
    dataset = models.CharField(max_length=300, help_text="file name of the labelled JSONL set")
    dataset_sha256 = models.CharField(max_length=64)
    dataset_path = models.CharField(max_length=500, help_text="where the set is read from (resuming reads it again)")
    strategy = models.CharField(max_length=32, default="statistical")
    ablation = models.CharField(max_length=32, default="full")
    mode = models.CharField(max_length=16, default="fixed", help_text="retrieval mode: fixed Researcher or agentic planner")
    limit = models.PositiveIntegerField(null=True, blank=True)
    exclude_self = models.BooleanField(default=False, help_text="leave-one-out: never retrieve the precedent with the record's id")
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    status = job_status_field(Status)
    versions = models.JSONField(default=dict, help_text="pipeline, strategy and model versions of the predictions")
    metrics = models.JSONField(default=dict)
    is_reference = models.BooleanField(default=False, help_text="later runs are compared against it")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    seconds = models.FloatField(default=0.0, help_text="wall time spent predicting, summed over sessions")

    class Meta(Job.Meta):
        constraints = [models.UniqueConstraint(fields=["is_reference"], condition=Q(is_reference=True),
                                               name="one_reference_evaluation")]

    def __str__(self) -> str:
        return f"{self.label} ({self.strategy}/{self.ablation}, {self.dataset})"


class EvaluationCase(models.Model):
    """One labelled record of the set and what the pipeline predicted for it."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveIntegerField()
    case_id = models.CharField(max_length=200)
    fact = models.TextField()
    gold = models.JSONField(help_text="charges, articles, term, defendants as labelled")
    prediction = models.JSONField(help_text="charges, articles, term, status, candidate and verified articles, cost")
    bundles = models.JSONField(help_text="the evidence bundle of every defendant")
    charges_correct = models.BooleanField(default=False)
    status = models.CharField(max_length=40)
    seconds = models.FloatField(default=0.0)

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["run", "case_id"], name="one_prediction_per_case")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.case_id}"
