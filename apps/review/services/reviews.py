"""Reviewing a finished run: assignment, per-item accept/override with a what-if, four-eyes decisions,
and the invalidation of an approval whose snapshot no longer matches.

Every change is written with its audit event in one transaction. A refused
decision (four-eyes) is audited too, in a transaction of its own, before the
refusal is raised.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from apps.accounts.models import Role
from apps.audit.services import audit_append
from apps.cases.models import DefendantResult, JudgmentRun
from apps.core.templated import Translations
from apps.review.models import REASON_MAX, Decision, Review, ReviewItem, ReviewOpening, WhatIf
from apps.review.services.snapshot import snapshot_build, snapshot_changes, snapshot_hash
from worker.agents.types import ArticleAudit, Bundle


class ReviewConflict(Exception):
    """The review changed under the caller (already decided, a newer version, not awaiting review): HTTP 409."""


class FourEyesViolation(PermissionDenied):
    """The submitter of a run tried to review it."""


def _reason(reason: str | None, *, field: str = "reason") -> str:
    text = (reason or "").strip()
    if not text:
        raise ValidationError({field: _("A reason is required.")})
    if len(text) > REASON_MAX:
        raise ValidationError({field: _("The reason is too long (at most %(n)d characters).") % {"n": REASON_MAX}})
    return text


def _require_reviewer(user) -> None:
    if not user.has_role(Role.REVIEWER):
        raise PermissionDenied(_("Only reviewers can review runs."))


def _four_eyes(review: Review, user, *, what: str) -> None:
    """The submitter of a run never reviews it. The refusal is audited (committed) before it is raised."""
    if review.run.requested_by_id is not None and review.run.requested_by_id == user.pk:
        with transaction.atomic():
            audit_append(action="review.denied", obj=review, actor=user,
                         after={"attempted": what, "rule": "four-eyes", "run": review.run_id})
        raise FourEyesViolation(_("You submitted this run: another reviewer must review it."))


def review_for_run(run: JudgmentRun) -> Review:
    """The run's review. Only a finished ('done') run can be reviewed. The worker opens it when the run
    finishes (apps/cases/services/runs.py), and migration 0003 opened it for the runs finished before,
    so a page view finds it; it is created here only for a done run written outside those paths.
    The review's ``run`` is the caller's object (with whatever the caller read along with it)."""
    if run.status != JudgmentRun.Status.DONE:
        raise ReviewConflict(_("Only a finished run can be reviewed."))
    review, _created = Review.objects.get_or_create(run=run)
    review.run = run
    return review


def _locked(review: Review) -> Review:
    return Review.objects.select_for_update().select_related("run", "run__case").get(pk=review.pk)


def _pending(review: Review, version: int | None) -> None:
    if review.status != Review.Status.PENDING:
        raise ReviewConflict(_("This run was already decided (%(status)s).") % {"status": review.get_status_display()})
    if version is not None and version != review.version:
        raise ReviewConflict(_("The review changed since you opened it; reload the page."))


def review_assign(*, review: Review, user, assignee) -> Review:
    """Assign the review to a reviewer (or to nobody with ``assignee=None``)."""
    _require_reviewer(user)
    if assignee is not None:
        _require_reviewer(assignee)
        if review.run.requested_by_id == assignee.pk:
            raise ValidationError(_("The submitter of a run cannot be assigned to review it."))
    with transaction.atomic():
        locked = _locked(review)
        before = locked.assigned_to_id
        locked.assigned_to = assignee
        locked.save(update_fields=["assigned_to", "updated_at"])
        audit_append(action="review.assign", obj=locked, actor=user, before={"assigned_to": before},
                     after={"assigned_to": assignee.pk if assignee else None})
    return locked


# --- per-item accept / override, and the what-if ------------------------------------------


def _item_view(item: ReviewItem | None) -> dict | None:
    if item is None:
        return None
    return {"target": item.target, "ref": item.ref, "action": item.action, "value": item.value, "reason": item.reason}


@dataclass
class ItemChange:
    """What ``review_item_change`` did: the item as written and, when the action ran the what-if again
    (``whatif_computed``), the what-if it stored (None: it was removed). The htmx answer shows these
    without reading them back."""

    item: ReviewItem
    whatif: WhatIf | None = None
    whatif_computed: bool = False


def review_item_set(*, review: Review, result: DefendantResult, target: str, ref: str, action: str,
                    value: bool | None = None, reason: str = "", user, version: int | None = None) -> ReviewItem:
    """Accept an evidence item or checklist verdict, or override it with a required reason.
    An override (or its change) runs the Adjudicator again on the changed evidence (the what-if)."""
    return review_item_change(review=review, result=result, target=target, ref=ref, action=action, value=value,
                              reason=reason, user=user, version=version).item


def review_item_change(*, review: Review, result: DefendantResult, target: str, ref: str, action: str,
                       value: bool | None = None, reason: str = "", user, version: int | None = None) -> ItemChange:
    """``review_item_set``, returning the what-if it computed along with the item (``ItemChange``).
    The result's stored bundle is read (Bundle.from_dict) once, for the check of ``ref`` and the what-if."""
    _require_reviewer(user)
    _four_eyes(review, user, what=f"{action} {target}")
    if target not in ReviewItem.Target.values:
        raise ValidationError({"target": _("Unknown evidence kind.")})
    if action not in ReviewItem.Action.values:
        raise ValidationError({"action": _("Unknown action.")})
    if result.run_id != review.run_id:
        raise ValidationError(_("This result belongs to another run."))
    if action == ReviewItem.Action.OVERRIDE:
        reason = _reason(reason)
        if value is None:
            raise ValidationError({"value": _("Say what the override sets.")})
    else:
        reason, value = (reason or "").strip()[:REASON_MAX], None
    stored = Bundle.from_dict(result.bundle or {})
    _check_ref(stored, target, ref)
    whatif, computed = None, False
    with transaction.atomic():
        locked = _locked(review)
        _pending(locked, version)
        # The review's row lock (above) serialises every write of its items: read, then update or create.
        item = ReviewItem.objects.filter(review=locked, version=locked.version, result=result, target=target,
                                         ref=ref).first()
        before = _item_view(item)
        if item is None:
            item = ReviewItem.objects.create(review=locked, version=locked.version, result=result, target=target,
                                             ref=ref, action=action, value=value, reason=reason, actor=user)
        else:
            item.action, item.value, item.reason, item.actor = action, value, reason, user
            item.save(update_fields=["action", "value", "reason", "actor", "at"])
            item.review = locked  # as created: the item's review is the row read under its lock
        if action == ReviewItem.Action.OVERRIDE or (before and before["action"] == ReviewItem.Action.OVERRIDE):
            whatif, computed = whatif_compute(review=locked, result=result, stored=stored), True
        # Last: from the append to the commit every other audited write waits on the trail's lock (the
        # what-if above runs before it, not while other reviewers wait).
        audit_append(action=f"review.{action}", obj=locked, actor=user, before=before,
                     after={**_item_view(item), "result": result.position, "version": locked.version}, reason=reason)
    return ItemChange(item=item, whatif=whatif, whatif_computed=computed)


def review_item_undo(*, review: Review, item: ReviewItem, user, version: int | None = None) -> None:
    """Withdraw an accept or override (undo); the what-if is computed again without it."""
    _require_reviewer(user)
    _four_eyes(review, user, what="undo")
    with transaction.atomic():
        locked = _locked(review)
        _pending(locked, version)
        if item.review_id != locked.pk or item.version != locked.version:
            raise ReviewConflict(_("This item belongs to another review version."))
        before, result = _item_view(item), item.result
        item.delete()
        whatif_compute(review=locked, result=result)
        audit_append(action="review.undo", obj=locked, actor=user, before=before,  # last: see review_item_set
                     after={"result": result.position, "version": locked.version})


def _check_ref(bundle: Bundle, target: str, ref: str) -> None:
    """The reference must name something in this result's evidence bundle (read only)."""
    articles = bundle.audit.articles if bundle.audit else []
    known: set[str]
    if target == ReviewItem.Target.ITEM:
        known = {f"{a.article_pk}:{i.item_pk}" for a in articles for i in a.items}
    elif target == ReviewItem.Target.ARTICLE:
        known = {str(a.article_pk) for a in articles}
    elif target == ReviewItem.Target.PRECEDENT:
        known = {str(pk) for pk in (bundle.research.candidate_cases if bundle.research else [])}
    else:
        known = {str(pk) for a in articles for pk in a.interpretations}
        known |= {str(e.pk) for e in (bundle.judgment.evidence if bundle.judgment else []) if e.kind == "interpretation"}
    if ref not in known:
        raise ValidationError(_("That item is not part of this result's evidence."))


def _overrides(review: Review, result: DefendantResult):
    from worker.agents.tools.whatif import Override

    items = ReviewItem.objects.filter(review=review, version=review.version, result=result,
                                      action=ReviewItem.Action.OVERRIDE).order_by("target", "ref")
    return [Override(i.target, i.ref, bool(i.value), i.reason) for i in items]


def whatif_compute(*, review: Review, result: DefendantResult, stored: Bundle | None = None) -> WhatIf | None:
    """Run only the Adjudicator again with the version's overrides; no overrides → no what-if.
    ``stored``: the result's bundle when the caller has read it already (Bundle.from_dict(result.bundle));
    it is handed to the Adjudicator, which may change it: the caller does not use it afterwards."""
    from apps.judging.services import judgment_whatif
    from worker.agents.tools.whatif import OverrideInvalid

    overrides = _overrides(review, result)
    if not overrides:
        WhatIf.objects.filter(review=review, version=review.version, result=result).delete()
        return None
    digest = hashlib.sha256(json.dumps([o.__dict__ for o in overrides], ensure_ascii=False, sort_keys=True)
                            .encode()).hexdigest()
    bundle, error = None, ""
    try:
        bundle = judgment_whatif(bundle=stored if stored is not None else result.bundle or {}, overrides=overrides,
                                 strategy=review.run.strategy).to_dict()
    except OverrideInvalid as exc:
        raise ValidationError(_override_refused(str(exc))) from exc
    except Exception as exc:  # the model may be unavailable: the what-if says so, nothing is invented
        error = f"{type(exc).__name__}: {exc}"[:2000]
    # Called under the review's row lock (review_item_set, review_item_undo): update, or create.
    whatif = WhatIf.objects.filter(review=review, version=review.version, result=result).only("pk").first()
    if whatif is None:
        return WhatIf.objects.create(review=review, version=review.version, result=result, overrides_sha256=digest,
                                     bundle=bundle, error=error)
    whatif.overrides_sha256, whatif.bundle, whatif.error = digest, bundle, error
    whatif.save(update_fields=["overrides_sha256", "bundle", "error", "computed_at"])
    return whatif


# Why the what-if refused an override (worker/agents/tools/whatif.py writes it in English), for the reviewer's page.
_override_refused = Translations(
    gettext_noop("checklist item %(ref)s is not in this evidence bundle"),
    gettext_noop("article %(ref)s is not in this evidence bundle"),
    gettext_noop("precedent %(ref)s is not in this evidence bundle"),
    gettext_noop("unknown override target %(target)s"),
    gettext_noop("this result has no audited evidence to change"),
)


# --- coverage: what a reviewer must have looked at before approving ----------------------------


def verified_articles(stored: Bundle | dict | None) -> list[ArticleAudit]:
    """The articles the run verified for one defendant (what an approval must have decided); ``stored``:
    the bundle as stored, or read already (Bundle.from_dict)."""
    audit = Bundle.of(stored or {}).audit
    return audit.verified if audit else []


def review_open(*, review: Review, result: DefendantResult, user) -> None:
    """Record that ``user`` opened this defendant's judgment in the review's current version.
    Only reviewers who may decide the run are recorded (not its submitter, not after a decision)."""
    if (not user.has_role(Role.REVIEWER) or review.status != Review.Status.PENDING
            or review.run.requested_by_id == user.pk or result.run_id != review.run_id):
        return
    with transaction.atomic():
        opening, created = ReviewOpening.objects.get_or_create(review=review, version=review.version, result=result,
                                                               reviewer=user)
        if created:  # who read which judgment before deciding: part of the review's record
            audit_append(action="review.open", obj=review, actor=user,
                         after={"result": result.pk, "defendant_position": result.position, "version": review.version})


def review_coverage(review: Review, user, results=None, *, items=None, bundles: dict | None = None) -> dict:
    """Per defendant: opened by ``user`` in this version, and the run's verified articles decided
    (accepted or overridden by any reviewer, individually, through one of their checklist items,
    or by "accept the rest"). ``complete`` is what an approval needs. ``items``: the ReviewItems of the
    review's current version when the caller has read them already; ``bundles``: result id → its bundle
    read already (Bundle.from_dict), for every one of ``results``."""
    results = list(results if results is not None else review.run.results.order_by("position"))
    opened = set(ReviewOpening.objects.filter(review=review, version=review.version, reviewer=user)
                 .values_list("result_id", flat=True))
    if items is None:
        items = ReviewItem.objects.filter(review=review, version=review.version).values_list("result_id", "target",
                                                                                             "ref", "bulk")
    else:
        items = [(i.result_id, i.target, i.ref, i.bulk) for i in items]
    decided: dict[int, set[str]] = {}
    bulk: dict[int, int] = {}
    for result_id, target, ref, is_bulk in items:
        if target == ReviewItem.Target.ARTICLE:
            decided.setdefault(result_id, set()).add(ref)
            bulk[result_id] = bulk.get(result_id, 0) + int(is_bulk)
        elif target == ReviewItem.Target.ITEM:
            decided.setdefault(result_id, set()).add(ref.partition(":")[0])
    rows = []
    for r in results:
        articles = verified_articles(bundles[r.pk] if bundles is not None else r.bundle)
        undecided = [a for a in articles if str(a.article_pk) not in decided.get(r.pk, set())]
        rows.append({"result": r, "position": r.position, "defendant": r.defendant, "opened": r.pk in opened,
                     "articles": len(articles), "decided": len(articles) - len(undecided),
                     "undecided": [a.label or a.key for a in undecided],
                     "undecided_refs": [str(a.article_pk) for a in undecided],
                     "bulk": bulk.get(r.pk, 0)})
    return {"rows": rows, "opened": sum(r["opened"] for r in rows), "defendants": len(rows),
            "articles": sum(r["articles"] for r in rows), "decided": sum(r["decided"] for r in rows),
            "complete": all(r["opened"] and not r["undecided"] for r in rows)}


def review_accept_rest(*, review: Review, result: DefendantResult, user, version: int | None = None) -> int:
    """Accept, in one explicit and recorded step, every verified article of one defendant that no
    reviewer has decided yet. The defendant's judgment must have been opened first. Returns how many."""
    _require_reviewer(user)
    _four_eyes(review, user, what="accept the rest")
    if result.run_id != review.run_id:
        raise ValidationError(_("This result belongs to another run."))
    with transaction.atomic():
        locked = _locked(review)
        _pending(locked, version)
        if not ReviewOpening.objects.filter(review=locked, version=locked.version, result=result,
                                            reviewer=user).exists():
            raise ValidationError(_("Open %(name)s's judgment before accepting the rest of it.")
                                  % {"name": result.defendant})
        todo = review_coverage(locked, user, [result])["rows"][0]["undecided_refs"]
        ReviewItem.objects.bulk_create([
            ReviewItem(review=locked, version=locked.version, result=result, target=ReviewItem.Target.ARTICLE, ref=ref,
                       action=ReviewItem.Action.ACCEPT, bulk=True, actor=user) for ref in todo])
        if todo:
            audit_append(action="review.accept_rest", obj=locked, actor=user,
                         after={"result": result.position, "version": locked.version, "articles": todo})
    return len(todo)


def _coverage_missing(review: Review, user) -> str:
    coverage = review_coverage(review, user)
    missing = []
    for row in coverage["rows"]:
        if not row["opened"]:
            missing.append(_("open the judgment for %(name)s") % {"name": row["defendant"]})
        if row["undecided"]:
            missing.append(_("decide %(articles)s for %(name)s (or accept the rest)")
                           % {"articles": "、".join(row["undecided"]), "name": row["defendant"]})
    return ("；" if (get_language() or "").startswith("zh") else "; ").join(missing)


# --- decisions ----------------------------------------------------------------------------


def decision_make(*, review: Review, kind: str, reason: str, user, version: int | None = None) -> Decision:
    """Approve, reject or return the run, with a reason. Four-eyes; one decision per review version:
    of two reviewers deciding at once, one succeeds and the other gets ReviewConflict."""
    _require_reviewer(user)
    if kind not in Decision.Kind.values:
        raise ValidationError({"kind": _("Choose approve, reject or return.")})
    reason = _reason(reason)
    _four_eyes(review, user, what=f"decision {kind}")
    status = {Decision.Kind.APPROVE: Review.Status.APPROVED, Decision.Kind.REJECT: Review.Status.REJECTED,
              Decision.Kind.RETURN: Review.Status.RETURNED}[kind]
    with transaction.atomic():
        locked = _locked(review)
        _pending(locked, version)
        snapshot, digest = None, ""
        if kind == Decision.Kind.APPROVE:
            failed = [w.result.defendant for w in WhatIf.objects.filter(review=locked, version=locked.version)
                      .exclude(error="").select_related("result")]
            if failed:
                raise ValidationError(_("The what-if could not be computed for %(names)s; remove the overrides "
                                        "or retry before approving.") % {"names": "、".join(failed)})
            missing = _coverage_missing(locked, user)
            if missing:
                raise ValidationError(_("The review is not complete. Before approving, %(missing)s.")
                                      % {"missing": missing})
            snapshot = snapshot_build(locked)
            digest = snapshot_hash(snapshot)
        try:
            with transaction.atomic():
                decision = Decision.objects.create(review=locked, version=locked.version, kind=kind, reason=reason,
                                                   reviewer=user, submitter_id=locked.run.requested_by_id,
                                                   snapshot=snapshot, snapshot_sha256=digest)
        except IntegrityError as exc:
            raise ReviewConflict(_("Another decision was recorded for this review version.")) from exc
        before = locked.status
        locked.status = status
        locked.save(update_fields=["status", "updated_at"])
        audit_append(action=f"review.{kind}", obj=locked, actor=user, reason=reason,
                     before={"status": before, "version": locked.version},
                     after={"status": status, "version": locked.version, "decision": decision.pk,
                            "snapshot_sha256": digest})
    return decision


def approval_current(review: Review, decisions: list[Decision] | None = None) -> Decision | None:
    """The valid approval of the review's current version. ``decisions``: every decision of the review,
    newest first, when the caller has read them already."""
    if decisions is not None:
        return next((d for d in decisions if d.version == review.version and d.kind == Decision.Kind.APPROVE
                     and d.valid), None)
    return review.decisions.filter(version=review.version, kind=Decision.Kind.APPROVE, valid=True).first()


_READ = object()


def _approval_drift(review: Review, decision=_READ) -> tuple[Decision, dict] | None:
    """The valid approval and the record's current snapshot when they no longer match, else None.
    ``decision``: ``approval_current(review)`` when the caller has it."""
    decision = approval_current(review) if decision is _READ else decision
    if decision is None:
        return None
    current = snapshot_build(review, version=decision.version)
    if snapshot_hash(current) == decision.snapshot_sha256:
        return None
    return decision, current


def approval_check(review: Review, approval=_READ) -> list[str] | None:
    """Read only: the parts that changed since the review's valid approval, or None when there is no
    valid approval or it still matches. Pages and API reads call this; only ``approval_verify`` (a POST,
    ``manage.py verify_approvals``) acts on a difference, so that no GET writes. ``approval``:
    ``approval_current(review)`` when the caller has it."""
    drift = _approval_drift(review, approval)
    if drift is None:
        return None
    decision, current = drift
    return snapshot_changes(decision.snapshot or {}, current)


def approval_valid(review: Review) -> Decision | None:
    """Read only: the review's approval when it is valid and still matches the record, else None."""
    decision = approval_current(review)
    return decision if decision is not None and approval_check(review) is None else None


def approval_verify(review: Review) -> Decision | None:
    """Recompute the snapshot of the review's valid approval; on any difference, invalidate the
    approval and return the run to review (a new review version). Returns the invalidated decision."""
    drift = _approval_drift(review)
    if drift is None:
        return None
    decision, current = drift
    with transaction.atomic():
        locked = _locked(review)
        decision = Decision.objects.select_for_update().get(pk=decision.pk)
        if not decision.valid or locked.version != decision.version:
            return None
        what = snapshot_changes(decision.snapshot or {}, current)
        decision.valid = False
        decision.invalidated_at = timezone.now()
        decision.invalidation_reason = "changed since approval: " + "; ".join(what)
        decision.save(update_fields=["valid", "invalidated_at", "invalidation_reason"])
        locked.status = Review.Status.PENDING
        locked.version += 1
        locked.save(update_fields=["status", "version", "updated_at"])
        audit_append(action="review.invalidate", obj=locked, reason=decision.invalidation_reason,
                     before={"status": Review.Status.APPROVED, "version": decision.version,
                             "snapshot_sha256": decision.snapshot_sha256},
                     after={"status": Review.Status.PENDING, "version": locked.version,
                            "snapshot_sha256": snapshot_hash(current)})
    return decision


def approvals_verify_all() -> tuple[int, list[Decision]]:
    """Verify every approved review; returns (how many were checked, the invalidated decisions)."""
    reviews = Review.objects.filter(status=Review.Status.APPROVED).select_related("run")
    checked, invalidated = 0, []
    for review in reviews.iterator():
        checked += 1
        decision = approval_verify(review)
        if decision is not None:
            invalidated.append(decision)
    return checked, invalidated
