"""Legal holds, case deletion and the retention purge (C9).

A case under an active legal hold can be neither deleted nor purged: the
services refuse (HTTP 409), and the database refuses too (triggers in
apps/review/migrations/0001_initial.py), so raw SQL cannot do it either.
Setting and releasing a hold, deleting a case and every purge are audited.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.db.models import Exists, Max, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import Role
from apps.audit.services import audit_append
from apps.cases.models import Case, JudgmentRun
from apps.review.models import LegalHold
from apps.review.services.reviews import _reason


class CaseHeld(Exception):
    """The case is under legal hold: HTTP 409."""


def _require_hold_role(user) -> None:
    if not (user.has_role(Role.ADMIN) or user.has_role(Role.REVIEWER)):
        raise PermissionDenied(_("Only reviewers and administrators can set or release legal holds."))


def hold_active(case: Case) -> LegalHold | None:
    return case.legal_holds.filter(released_at__isnull=True).first()


def legal_hold_set(*, case: Case, reason: str, user) -> LegalHold:
    _require_hold_role(user)
    reason = _reason(reason)
    with transaction.atomic():
        Case.objects.select_for_update().get(pk=case.pk)
        if hold_active(case):
            raise ValidationError(_("This case is already under legal hold."))
        hold = LegalHold.objects.create(case=case, reason=reason, set_by=user)
        audit_append(action="case.hold", obj=case, actor=user, reason=reason, after={"hold": hold.pk})
    return hold


def legal_hold_release(*, case: Case, reason: str, user) -> LegalHold:
    _require_hold_role(user)
    reason = _reason(reason)
    with transaction.atomic():
        Case.objects.select_for_update().get(pk=case.pk)
        hold = hold_active(case)
        if hold is None:
            raise ValidationError(_("This case is not under legal hold."))
        hold.released_by, hold.released_at, hold.release_reason = user, timezone.now(), reason
        hold.save(update_fields=["released_by", "released_at", "release_reason"])
        audit_append(action="case.hold_release", obj=case, actor=user, reason=reason, before={"hold": hold.pk},
                     after={"hold": None})
    return hold


def _delete(case: Case) -> None:
    # Decisions refuse deletion except inside a purge (their trigger); holds refuse while active.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL lextrace.purge = 'on'")
    case.delete()


def case_delete(*, case: Case, user, reason: str) -> None:
    """Delete a case and everything computed from it (administrators only), unless it is held."""
    if not user.has_role(Role.ADMIN):
        raise PermissionDenied(_("Only administrators can delete cases."))
    reason = _reason(reason)
    with transaction.atomic():
        locked = Case.objects.select_for_update().get(pk=case.pk)
        if hold_active(locked):
            raise CaseHeld(_("This case is under legal hold and cannot be deleted."))
        if locked.runs.filter(status__in=[JudgmentRun.Status.QUEUED, JudgmentRun.Status.RUNNING]).exists():
            raise ValidationError(_("A run of this case is still in progress; cancel it first."))
        pk, version = locked.pk, locked.version
        _delete(locked)
        audit_append(action="case.delete", object_type="cases.case", object_id=pk, actor=user, reason=reason,
                     before={"version": version})


def retention_candidates(*, now: dt.datetime | None = None, days: int | None = None):
    """Cases last changed (case or run) before the retention period, not held, with no run in progress."""
    days = settings.LEXTRACE_RETENTION_DAYS if days is None else days
    cutoff = (now or timezone.now()) - dt.timedelta(days=days)
    active = LegalHold.objects.filter(case=OuterRef("pk"), released_at__isnull=True)
    busy = JudgmentRun.objects.filter(case=OuterRef("pk"), status__in=[JudgmentRun.Status.QUEUED,
                                                                       JudgmentRun.Status.RUNNING])
    return (Case.objects.annotate(last_run=Max("runs__created_at"), held=Exists(active), busy=Exists(busy))
            .filter(updated_at__lt=cutoff, held=False, busy=False)
            .filter(Q(last_run__isnull=True) | Q(last_run__lt=cutoff)).order_by("pk"))


def retention_purge(*, now: dt.datetime | None = None, days: int | None = None, dry_run: bool = False) -> dict:
    """Delete the cases past retention (each in its own transaction, audited); held cases are skipped."""
    days = settings.LEXTRACE_RETENTION_DAYS if days is None else days
    pks = list(retention_candidates(now=now, days=days).values_list("pk", flat=True))
    held = Case.objects.filter(legal_holds__released_at__isnull=True).distinct().count()
    purged = []
    if not dry_run:
        for pk in pks:
            with transaction.atomic():
                case = Case.objects.select_for_update().filter(pk=pk).first()
                if case is None or hold_active(case):
                    continue
                version = case.version
                _delete(case)
                audit_append(action="case.purge", object_type="cases.case", object_id=pk,
                             reason=f"retention period of {days} days passed", before={"version": version})
                purged.append(pk)
    return {"candidates": pks, "purged": purged, "held": held, "days": days}
