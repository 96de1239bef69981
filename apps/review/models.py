"""Review of finished judgment runs: per-item overrides, what-ifs, four-eyes decisions, legal holds.

A run becomes reviewable when it is done; its Review row is created on first
use. Overrides and decisions belong to a review *version*: when an approval is
invalidated (its snapshot no longer matches the evidence), the version goes up
and the run is reviewed again from a clean slate, while the earlier rows stay
as history. The database enforces what must never happen whatever the code
does (migration 0001): a decision by the run's submitter, a decision without a
reason, two decisions on one version, a decision changed other than being
invalidated, and deleting a case under legal hold.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from apps.cases.models import Case, DefendantResult, JudgmentRun

REASON_MAX = 2000


class Review(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("awaiting review")
        APPROVED = "approved", _("approved")
        REJECTED = "rejected", _("rejected")
        RETURNED = "returned", _("returned to staff")

    run = models.OneToOneField(JudgmentRun, on_delete=models.CASCADE, related_name="review")
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    version = models.PositiveIntegerField(_("review version"), default=1)
    assigned_to = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+", verbose_name=_("assigned to"))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"review of run {self.run_id} v{self.version} ({self.status})"


class ReviewItem(models.Model):
    """A reviewer's verdict on one evidence item or checklist verdict of one defendant's result."""

    class Target(models.TextChoices):
        ITEM = "item", _("checklist verdict")
        ARTICLE = "article", _("article")
        PRECEDENT = "precedent", _("precedent")
        INTERPRETATION = "interpretation", _("interpretation")

    class Action(models.TextChoices):
        ACCEPT = "accept", _("accepted")
        OVERRIDE = "override", _("overridden")

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="items")
    version = models.PositiveIntegerField()
    result = models.ForeignKey(DefendantResult, on_delete=models.CASCADE, related_name="review_items")
    target = models.CharField(max_length=16, choices=Target.choices)
    ref = models.CharField(max_length=64)
    action = models.CharField(max_length=8, choices=Action.choices)
    # For an override: item → satisfied; article → applies; precedent/interpretation → kept as evidence.
    value = models.BooleanField(null=True, blank=True)
    reason = models.TextField(blank=True)
    # Accepted by the reviewer's explicit "accept the rest" of a defendant's verified articles.
    bulk = models.BooleanField(default=False)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["result_id", "target", "ref"]
        constraints = [
            models.UniqueConstraint(fields=["review", "version", "result", "target", "ref"], name="review_item_once"),
            models.CheckConstraint(condition=Q(action="accept") | (Q(value__isnull=False) & Q(reason__regex=r"\S")),
                                   name="review_item_override_has_value_and_reason"),
        ]


class ReviewOpening(models.Model):
    """A reviewer opened one defendant's judgment in one review version. An approval needs the
    deciding reviewer to have opened every defendant (apps.review.services.reviews.review_coverage)."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="openings")
    version = models.PositiveIntegerField()
    result = models.ForeignKey(DefendantResult, on_delete=models.CASCADE, related_name="review_openings")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    opened_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["review", "version", "result", "reviewer"],
                                               name="review_opening_once")]


class WhatIf(models.Model):
    """The Adjudicator run again on one result's evidence with the version's overrides applied."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="whatifs")
    version = models.PositiveIntegerField()
    result = models.ForeignKey(DefendantResult, on_delete=models.CASCADE, related_name="whatifs")
    overrides_sha256 = models.CharField(max_length=64)
    bundle = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["review", "version", "result"], name="whatif_per_result")]


class Decision(models.Model):
    class Kind(models.TextChoices):
        APPROVE = "approve", _("approve")
        REJECT = "reject", _("reject")
        RETURN = "return", _("return to staff")

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="decisions")
    version = models.PositiveIntegerField()
    kind = models.CharField(_("decision"), max_length=8, choices=Kind.choices)
    reason = models.TextField(_("reason"))
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                                 verbose_name=_("reviewer"))
    # The run's submitter, copied so the four-eyes CHECK can compare; a trigger checks the copy is true.
    submitter = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    # An approval binds to the snapshot of everything it approved (apps.review.services.snapshot).
    snapshot_sha256 = models.CharField(max_length=64, blank=True)
    snapshot = models.JSONField(null=True, blank=True)
    decided_at = models.DateTimeField(_("decided at"), auto_now_add=True)
    valid = models.BooleanField(default=True)
    invalidated_at = models.DateTimeField(null=True, blank=True)
    invalidation_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-decided_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["review", "version"], name="one_decision_per_review_version"),
            models.CheckConstraint(condition=Q(reason__regex=r"\S"), name="decision_reason_required"),
            models.CheckConstraint(condition=~Q(reviewer=F("submitter")), name="decision_four_eyes"),
            models.CheckConstraint(condition=~Q(kind="approve") | Q(snapshot_sha256__regex=r"^[0-9a-f]{64}$"),
                                   name="approval_binds_snapshot"),
        ]


class LegalHold(models.Model):
    """While a hold is active (not released) the case cannot be deleted or purged."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="legal_holds")
    reason = models.TextField(_("reason"))
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    set_at = models.DateTimeField(auto_now_add=True)
    released_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    released_at = models.DateTimeField(null=True, blank=True)
    release_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-set_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["case"], condition=Q(released_at__isnull=True), name="one_active_hold_per_case"),
            models.CheckConstraint(condition=Q(reason__regex=r"\S"), name="hold_reason_required"),
        ]
