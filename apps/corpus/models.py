"""The legal corpus: the relational source of truth for the graph and the agents.

Statute text is versioned: an amendment adds an ArticleVersion and closes the
validity of the previous one; no version's text is ever rewritten. Every row
records the ImportBatch (file, hash, who, when) that brought it in.
"""

import datetime as dt

from django.conf import settings
from django.contrib.postgres.constraints import ExclusionConstraint
from django.contrib.postgres.fields import ArrayField, DateRangeField, RangeOperators
from django.db import models
from django.db.models import F, Func, Q, Value
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from apps.core.models import Job, JobStatus, job_status_field, job_statuses

CRIMINAL_LAW = "中华人民共和国刑法"


class ImportBatch(Job):
    """One upload or import command run, successful or not (provenance of rows). A job
    (apps/core/models.py) that may stop half-way, checked, for an admin to publish or discard it;
    it reports its errors line by line (``errors``), not as a message."""

    Status = job_statuses(JobStatus.CHECKED, JobStatus.PUBLISHED, JobStatus.DUPLICATE, JobStatus.FAILED,
                          JobStatus.DISCARDED)
    WAITING = frozenset({JobStatus.CHECKED})

    class Format(models.TextChoices):
        LEXTRACE = "lextrace", _("Lextrace JSONL / JSON")
        CAIL2018 = "cail2018", _("CAIL2018 JSON lines")
        LECARD = "lecard", _("LeCaRD / LeCaRDv2 queries or candidates")
        JUDGMENT = "judgment", _("court judgment (TXT, DOCX, PDF)")
        STATUTE_TXT = "statute-txt", _("statute text (TXT, DOCX, PDF)")

    kind = models.CharField(max_length=32, blank=True)
    # What the records of each kind are, for the pages (the parsers' kinds: apps/corpus/services/importing.py APPLIERS)
    KIND_LABELS = {"statute": _("statutes"), "interpretation": _("interpretations"), "checklist": _("checklists"),
                   "case": _("precedent cases"), "charges": _("charge table")}
    filename = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, db_index=True)
    size_bytes = models.BigIntegerField(default=0)
    amendment = models.BooleanField(default=False, help_text=_("changed article texts are amendments, not conflicts"))
    law_title = models.CharField(max_length=200, blank=True, help_text=_("for plain-text statutes"))
    status = job_status_field(Status)
    message = None
    counts = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    upload = models.FileField(upload_to="imports/", blank=True)
    format = models.CharField(max_length=16, choices=Format.choices, blank=True)
    # What the admin chose besides the file: effective date, version label, source, skip_refused …
    options = models.JSONField(default=dict, blank=True)
    # The dry run: what would be (or was) added, amended, merged and refused, record by record.
    report = models.JSONField(default=dict, blank=True)
    confirmed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+", help_text=_("who confirmed the checked import for publication"))
    confirmed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.filename} ({self.status})"

    @property
    def kind_display(self) -> str:
        return str(self.KIND_LABELS.get(self.kind, self.kind))


class Law(models.Model):
    class Kind(models.TextChoices):
        STATUTE = "statute", _("statute")
        INTERPRETATION = "interpretation", _("judicial interpretation")
        REGULATION = "regulation", _("regulation")

    title = models.CharField(max_length=200, unique=True)
    issuer = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.STATUTE)

    def __str__(self) -> str:
        return self.title


class Article(models.Model):
    """The identity of a provision (law, number, sub-article); its texts are versions."""

    law = models.ForeignKey(Law, on_delete=models.PROTECT, related_name="articles")
    number = models.PositiveIntegerField()
    sub = models.PositiveSmallIntegerField(default=0, help_text=_("1 for 之一, 2 for 之二 …"))
    key = models.CharField(max_length=16)
    label = models.CharField(max_length=40)
    refers_to = models.ManyToManyField("self", symmetrical=False, related_name="referred_by", blank=True)

    class Meta:
        ordering = ["law_id", "number", "sub"]
        constraints = [models.UniqueConstraint(fields=["law", "number", "sub"], name="article_unique_per_law")]

    def __str__(self) -> str:
        return f"{self.law.title} {self.label}"


class ArticleVersion(models.Model):
    article = models.ForeignKey(Article, on_delete=models.PROTECT, related_name="versions")
    text = models.TextField()
    text_sha256 = models.CharField(max_length=64)
    gloss_en = models.TextField(blank=True)
    part = models.CharField(max_length=100, blank=True)
    chapter = models.CharField(max_length=100, blank=True)
    section = models.CharField(max_length=100, blank=True)
    topic = models.CharField(max_length=100, blank=True)
    repealed = models.BooleanField(default=False)
    valid_from = models.DateField(null=True, blank=True, help_text=_("empty: in force since before any recorded version"))
    valid_to = models.DateField(null=True, blank=True, help_text=_("empty: still in force"))
    valid_during = models.GeneratedField(
        expression=Func(F("valid_from"), F("valid_to"), Value("[]"), function="daterange"),
        output_field=DateRangeField(),
        db_persist=True,
    )
    supersedes = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by")
    text_source = models.CharField(max_length=200, blank=True)
    batch = models.ForeignKey(ImportBatch, null=True, blank=True, on_delete=models.PROTECT, related_name="article_versions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["article_id", "valid_from"]
        constraints = [
            # Two versions of one article can never be in force on the same day.
            ExclusionConstraint(
                name="article_versions_do_not_overlap",
                expressions=[("article", RangeOperators.EQUAL), ("valid_during", RangeOperators.OVERLAPS)],
            ),
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_from__isnull=True) | Q(valid_to__gte=F("valid_from")),
                name="article_version_valid_to_after_from",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.article} [{self.valid_from or '…'} – {self.valid_to or '…'}]"

    def in_force_on(self, day: dt.date) -> bool:
        return (self.valid_from is None or self.valid_from <= day) and (self.valid_to is None or day <= self.valid_to)


class Charge(models.Model):
    """A charge (罪名). Non-statutory names used by datasets point to a canonical charge."""

    name = models.CharField(max_length=100, unique=True)
    official = models.BooleanField(default=False, help_text=_("defined by a statute provision"))
    canonical = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="aliases")
    # A few charges sit in two chapters' lists (e.g. 故意伤害罪), so several categories.
    categories = ArrayField(models.CharField(max_length=60), default=list, blank=True)
    articles = models.ManyToManyField(Article, related_name="charges", blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ChecklistItem(models.Model):
    class Origin(models.TextChoices):
        IMPORTED = "imported", _("imported")
        GENERATED = "generated", _("generated")
        REVIEWER_EDITED = "reviewer_edited", _("reviewer-edited")

    article_version = models.ForeignKey(ArticleVersion, on_delete=models.CASCADE, related_name="checklist")
    order = models.PositiveSmallIntegerField()
    question = models.TextField()
    gloss_en = models.TextField(blank=True)
    variant = models.CharField(max_length=16, default="main", help_text=_("main, or alt for the alternative imported list"))
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.IMPORTED)
    batch = models.ForeignKey(ImportBatch, null=True, blank=True, on_delete=models.PROTECT)

    class Meta:
        ordering = ["article_version_id", "variant", "order"]
        constraints = [models.UniqueConstraint(fields=["article_version", "variant", "order"], name="checklist_item_order")]


class Interpretation(models.Model):
    """One paragraph of a judicial interpretation, linked to articles by (law, number)."""

    ext_id = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=300)
    para = models.CharField(max_length=40, blank=True)
    text = models.TextField()
    text_sha256 = models.CharField(max_length=64)
    gloss_en = models.TextField(blank=True)
    articles = models.ManyToManyField(Article, related_name="interpretations", blank=True)
    batch = models.ForeignKey(ImportBatch, null=True, blank=True, on_delete=models.PROTECT)

    class Meta:
        ordering = ["ext_id"]

    def __str__(self) -> str:
        return f"{self.source} {self.para}"


class Precedent(models.Model):
    class CourtLevel(models.TextChoices):
        BASIC = "basic", _("basic court")
        INTERMEDIATE = "intermediate", _("intermediate court")
        HIGH = "high", _("high court")
        SUPREME = "supreme", _("supreme court")

    ext_id = models.CharField(max_length=120, unique=True)
    source = models.CharField(max_length=60, db_index=True)
    fact = models.TextField()
    fact_sha256 = models.CharField(max_length=64)
    # The exact-duplicate key (lexlib/parsing/dedup.py: NFKC, no whitespace, punctuation or symbols).
    fact_norm_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    defendants = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    court_level = models.CharField(max_length=16, choices=CourtLevel.choices, blank=True)
    label_source = models.CharField(max_length=40, blank=True)
    origin = models.JSONField(default=dict, blank=True)
    fine = models.BigIntegerField(null=True, blank=True)
    gloss_en = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)
    batch = models.ForeignKey(ImportBatch, null=True, blank=True, on_delete=models.PROTECT)

    class Meta:
        ordering = ["ext_id"]

    def __str__(self) -> str:
        return self.ext_id


class PrecedentOutcome(models.Model):
    """The outcome for one defendant (or for the case when labels are not per defendant)."""

    precedent = models.ForeignKey(Precedent, on_delete=models.CASCADE, related_name="outcomes")
    position = models.PositiveSmallIntegerField(default=0)
    defendant = models.CharField(max_length=100, blank=True)
    charges = models.ManyToManyField(Charge, related_name="outcomes", blank=True)
    articles = models.ManyToManyField(Article, related_name="outcomes", blank=True)
    unresolved_articles = ArrayField(models.IntegerField(), default=list, blank=True)
    term_known = models.BooleanField(default=False)
    term_months = models.PositiveIntegerField(null=True, blank=True)
    life = models.BooleanField(default=False)
    death = models.BooleanField(default=False)
    term_kind = models.CharField(max_length=40, blank=True)
    suspended = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["precedent_id", "position"]
        constraints = [models.UniqueConstraint(fields=["precedent", "position"], name="outcome_position")]


class SearchIndex(models.Model):
    """A built search index (BM25 or dense) over articles or precedents.

    A new index is built beside the active one and switched to atomically, so a
    failed rebuild never takes search down.
    """

    class Target(models.TextChoices):
        ARTICLES = "articles", _("articles")
        PRECEDENTS = "precedents", _("precedents")
        FEATURES = "features", _("case features (ontology)")

    class Method(models.TextChoices):
        BM25 = "bm25", "BM25"
        DENSE = "dense", _("dense")

    class Status(models.TextChoices):
        BUILDING = "building", _("building")
        READY = "ready", _("ready")
        FAILED = "failed", _("failed")

    target = models.CharField(max_length=16, choices=Target.choices)
    method = models.CharField(max_length=8, choices=Method.choices)
    backend = models.CharField(max_length=40)
    model_id = models.CharField(max_length=200)
    dim = models.PositiveIntegerField(null=True, blank=True)
    artefact_dir = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.BUILDING)
    active = models.BooleanField(default=False)
    documents = models.PositiveIntegerField(default=0)
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["target", "method"], condition=Q(active=True), name="one_active_index_per_target_method"
            )
        ]

    def __str__(self) -> str:
        return f"{self.method}:{self.target} {self.model_id}"


class DenseVector(models.Model):
    """One embedding of an article version or a precedent in one SearchIndex.

    The column has no fixed dimension so several models can coexist; each
    index gets its own HNSW index over ``vector::vector(dim)`` (partial, by
    index id), created when the index is built.
    """

    index = models.ForeignKey(SearchIndex, on_delete=models.CASCADE, related_name="vectors")
    object_id = models.BigIntegerField()
    vector = VectorField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["index", "object_id"], name="one_vector_per_object")]
