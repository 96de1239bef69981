"""Cases, their edit history, and judgment runs with one result per defendant.

A case belongs to one team; every read goes through apps.cases.selectors,
which filters by the caller's teams. A run snapshots the case (version, facts,
defendants, offence date) so later edits never change what a result was
computed from. The evidence itself is the pipeline's bundle (JSON), one per
defendant, rendered by templates/cases/_evidence.html.
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.accounts.models import Team
from apps.core.models import Job
from worker.agents.types import Bundle, Status as PipelineStatus

MAX_DEFENDANTS = 50
DEFENDANT_NAME_MAX = 100


class CaseUpload(models.Model):
    """A facts document (TXT, DOCX, PDF) uploaded at intake, kept for provenance.

    The text was extracted in a resource-limited child process
    (lexlib.parsing.documents.extract_text) and shown to the user, who
    confirmed or edited it before the case was saved. The stored file name is
    generated; ``filename`` is only what the user called it.
    """

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="case_uploads", verbose_name=_("team"))
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    filename = models.CharField(_("file name"), max_length=255)
    kind = models.CharField(_("type"), max_length=8)
    sha256 = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField(_("size"))
    pages = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField(_("extracted text"))
    file = models.FileField(upload_to="case-uploads/")
    created_at = models.DateTimeField(_("uploaded at"), auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.filename


class Case(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="cases", verbose_name=_("team"))
    title = models.CharField(_("title"), max_length=200)
    facts = models.TextField(_("facts"))
    offence_date = models.DateField(_("offence date"))
    defendants = ArrayField(models.CharField(max_length=DEFENDANT_NAME_MAX), verbose_name=_("defendants"))
    upload = models.ForeignKey(CaseUpload, null=True, blank=True, on_delete=models.SET_NULL, related_name="cases",
                               verbose_name=_("uploaded document"))
    # Incremented by every saved change; each change leaves a CaseRevision.
    version = models.PositiveIntegerField(_("version"), default=1)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.title


class CaseRevision(models.Model):
    """One saved change of a case: who, when, and the editable fields before and after."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField(_("version"))
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
                                   verbose_name=_("changed by"))
    changed_at = models.DateTimeField(_("changed at"), default=timezone.now)
    changed_fields = ArrayField(models.CharField(max_length=32), default=list, blank=True)
    before = models.JSONField(null=True, blank=True, help_text=_("empty for the revision that created the case"))
    after = models.JSONField()

    class Meta:
        ordering = ["case_id", "-version"]
        constraints = [models.UniqueConstraint(fields=["case", "version"], name="case_revision_version")]


class JudgmentRun(Job):
    """A job (apps/core/models.py): queued, running, then done, failed or cancelled."""

    class Strategy(models.TextChoices):
        STATISTICAL = "statistical", _("statistical (no LLM)")
        LLM = "llm", _("LLM")

    class Mode(models.TextChoices):
        FIXED = "fixed", _("fixed Researcher (four retrieval paths)")
        AGENTIC = "agentic", _("agentic planner (Legal-R1: chooses the next source until the evidence suffices)")

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="runs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
                                     verbose_name=_("requested by"))
    strategy = models.CharField(_("strategy"), max_length=16, choices=Strategy.choices)
    ablation = models.CharField(_("ablation"), max_length=32)
    mode = models.CharField(_("retrieval mode"), max_length=16, choices=Mode.choices, default=Mode.FIXED)
    # What the run was computed from: the case as it was when the run was requested.
    case_version = models.PositiveIntegerField(_("case version"))
    facts = models.TextField()
    defendants = ArrayField(models.CharField(max_length=DEFENDANT_NAME_MAX))
    offence_date = models.DateField()
    retry_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retries")
    attempt_count = models.PositiveSmallIntegerField(default=0, help_text=_("number of the current attempt"))
    cancel_requested = models.BooleanField(default=False)
    cancel_requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                            related_name="+")
    # Strategy, model and prompt versions reported by the pipeline (merged over the defendants).
    versions = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"run {self.pk} of case {self.case_id} ({self.status})"


class RunAttempt(models.Model):
    """One execution of a run by a worker. A worker that died mid-run leaves its attempt 'aborted'."""

    class Status(models.TextChoices):
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        FAILED = "failed", _("failed")
        CANCELLED = "cancelled", _("cancelled")
        ABORTED = "aborted", _("aborted (worker lost)")

    run = models.ForeignKey(JudgmentRun, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    worker = models.CharField(max_length=200, blank=True)
    pid = models.IntegerField(null=True, blank=True, help_text=_("operating-system process of the worker"))
    backend_pid = models.IntegerField(null=True, blank=True, help_text=_("PostgreSQL backend holding the run lock"))
    started_at = models.DateTimeField(default=timezone.now)
    heartbeat_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["run_id", "number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="run_attempt_number")]


class RunEvent(models.Model):
    """A progress report from the pipeline: a stage started, or an article was audited."""

    run = models.ForeignKey(JudgmentRun, on_delete=models.CASCADE, related_name="events")
    attempt = models.ForeignKey(RunAttempt, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=16)  # "stage" | "article"
    defendant = models.CharField(max_length=DEFENDANT_NAME_MAX, blank=True)
    stage = models.CharField(max_length=32, blank=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["pk"]


RESULT_STATUS_LABELS = {
    PipelineStatus.JUDGED: _("judged"),
    PipelineStatus.NO_EVIDENCE: _("no evidence: retrieval found no candidate article"),
    PipelineStatus.INSUFFICIENT_EVIDENCE: _("insufficient evidence: the Auditor verified no article"),
    PipelineStatus.MODEL_UNAVAILABLE: _("model unavailable"),
    PipelineStatus.UNPARSEABLE_OUTPUT: _("unparseable model output"),
    PipelineStatus.UNRESOLVED_CITATION: _("unresolved citation"),
    PipelineStatus.NOT_IN_FORCE: _("article not in force on the offence date"),
    PipelineStatus.BUDGET_EXHAUSTED: _("LLM budget exhausted"),
}


# A result's term kind read in the database (DefendantResult.term_kind), for listings that defer the bundle.
TERM_KIND = models.F("bundle__judgment__term__kind")


class DefendantResult(models.Model):
    """The pipeline's outcome for one defendant of a run, with its complete evidence bundle."""

    run = models.ForeignKey(JudgmentRun, on_delete=models.CASCADE, related_name="results")
    position = models.PositiveSmallIntegerField()
    defendant = models.CharField(_("defendant"), max_length=DEFENDANT_NAME_MAX)
    status = models.CharField(_("status"), max_length=32,
                              choices=[(s.value, label) for s, label in RESULT_STATUS_LABELS.items()])
    message = models.TextField(blank=True)
    charges = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    article_keys = ArrayField(models.CharField(max_length=16), default=list, blank=True)
    term_months = models.PositiveIntegerField(null=True, blank=True)
    life = models.BooleanField(default=False)
    death = models.BooleanField(default=False)
    bundle = models.JSONField()

    class Meta:
        ordering = ["run_id", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="one_result_per_defendant")]

    @property
    def term_kind(self) -> str | None:
        """The kind the law fixed for the term (worker.agents.graph_types.Term.kind: "detention" for 拘役); None: written
        by its length. Listings that leave the bundle in the database annotate it as ``kind`` (``TERM_KIND``)."""
        if "kind" in self.__dict__:
            return self.__dict__["kind"]
        judgment = Bundle.of(self.bundle).judgment if self.bundle else None
        return judgment.term.kind if judgment is not None and judgment.term is not None else None

    @property
    def judged(self) -> bool:
        return self.status == PipelineStatus.JUDGED
