"""Case intake and edits. Every saved change bumps the case version and leaves a CaseRevision."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import Team, User
from apps.accounts.selectors import team_list_for
from apps.audit.services import audit_append
from apps.cases.models import DEFENDANT_NAME_MAX, MAX_DEFENDANTS, Case, CaseRevision, CaseUpload

EDITABLE_FIELDS = ("title", "facts", "offence_date", "defendants")
MAX_FACTS_CHARS = 100_000
TITLE_MAX = 200
_SEPARATORS = re.compile(r"[\n,，、;；]+")


class CaseConflict(ValidationError):
    """The case changed since the editor loaded it (optimistic locking on ``version``)."""


class CaseUnderHold(CaseConflict):
    """The case is under legal hold (apps.review): it is preserved as it is, so no edit (HTTP 409)."""


def _hold_active(case_pk: int) -> bool:
    from django.apps import apps

    return apps.get_model("review", "LegalHold").objects.filter(case_id=case_pk, released_at__isnull=True).exists()


def defendants_parse(text: str) -> list[str]:
    """Names from a form field: one per line, or separated by commas, 、 or semicolons."""
    return [name.strip() for name in _SEPARATORS.split(text or "") if name.strip()]


def _clean_defendants(names: Iterable[str]) -> list[str]:
    cleaned = list(dict.fromkeys(n.strip() for n in names if n and n.strip()))
    if not cleaned:
        raise ValidationError({"defendants": _("Name at least one defendant.")})
    if len(cleaned) > MAX_DEFENDANTS:
        raise ValidationError({"defendants": _("At most %(n)d defendants per case.") % {"n": MAX_DEFENDANTS}})
    too_long = [n for n in cleaned if len(n) > DEFENDANT_NAME_MAX]
    if too_long:
        message = _("A defendant's name may have at most %(n)d characters.") % {"n": DEFENDANT_NAME_MAX}
        raise ValidationError({"defendants": message})
    return cleaned


def _clean_facts(facts: str) -> str:
    # Browsers send CRLF; normalising keeps an unchanged resubmission from counting as an edit.
    text = (facts or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise ValidationError({"facts": _("Enter the facts of the case or upload a document.")})
    if len(text) > MAX_FACTS_CHARS:
        raise ValidationError({"facts": _("The facts may have at most %(n)d characters.") % {"n": MAX_FACTS_CHARS}})
    return text


def _clean_title(title: str, facts: str) -> str:
    title = " ".join((title or "").split())
    if not title:
        first_line = facts.split("\n", 1)[0]
        title = first_line[:40] + ("…" if len(first_line) > 40 else "")
    return title[:TITLE_MAX]


def _clean_date(value) -> dt.date:
    if not isinstance(value, dt.date):
        raise ValidationError({"offence_date": _("Enter the offence date.")})
    if value > timezone.localdate():
        raise ValidationError({"offence_date": _("The offence date %(date)s is in the future. Enter the day the "
                                                 "offence was committed.") % {"date": value.isoformat()}})
    return value


def case_snapshot(case: Case) -> dict:
    """The editable fields as JSON: what a revision records before and after a change."""
    return {"title": case.title, "facts": case.facts,
            "offence_date": case.offence_date.isoformat() if case.offence_date else None,
            "defendants": list(case.defendants)}


def _check_team(user: User, team: Team) -> None:
    if not team_list_for(user=user).filter(pk=team.pk).exists():
        # The same message as for a team that does not exist: membership is not revealed.
        raise ValidationError({"team": _("Choose one of your teams.")})


@transaction.atomic
def case_create(*, user: User, team: Team, facts: str, offence_date: dt.date, defendants: Iterable[str],
                title: str = "", upload: CaseUpload | None = None, confirmed: Iterable[str] = ()) -> Case:
    """Save a new case and its first revision. ``confirmed``: the intake findings the clerk confirmed
    (apps.cases.services.intake), kept in the audit event."""
    _check_team(user, team)
    if upload is not None and upload.team_id != team.pk:
        raise ValidationError({"upload": _("The uploaded document belongs to another team.")})
    facts = _clean_facts(facts)
    case = Case.objects.create(team=team, title=_clean_title(title, facts), facts=facts,
                               offence_date=_clean_date(offence_date), defendants=_clean_defendants(defendants),
                               upload=upload, created_by=user)
    CaseRevision.objects.create(case=case, version=case.version, changed_by=user, changed_fields=list(EDITABLE_FIELDS),
                                before=None, after=case_snapshot(case))
    audit_append(action="case.create", obj=case, actor=user, after=_audit_view(case, confirmed))
    if upload is not None:
        # The intake preview's confirmation: the extracted text (as the user left it) became this case.
        audit_append(action="case.upload_confirm", obj=upload, actor=user, after={"case": case.pk})
    return case


def _audit_view(case: Case, confirmed: Iterable[str] = ()) -> dict:
    """What the append-only audit trail keeps of a case: hashes, never the facts or names themselves
    (the trail cannot be purged; the case and its revisions can)."""
    view = {"version": case.version, "team": case.team_id, "facts_sha256": hashlib.sha256(case.facts.encode()).hexdigest(),
            "defendants": len(case.defendants), "offence_date": case.offence_date.isoformat() if case.offence_date else None}
    if confirmed:
        view["confirmed"] = sorted(set(confirmed))
    return view


@transaction.atomic
def case_update(*, case: Case, user: User, expected_version: int | None = None, title: str | None = None,
                facts: str | None = None, offence_date: dt.date | None = None,
                defendants: Iterable[str] | None = None, confirmed: Iterable[str] = ()) -> Case:
    """Apply the given fields; a change that alters nothing leaves no revision.

    ``expected_version`` is the version the editor saw: if someone saved in
    between, CaseConflict is raised instead of silently overwriting their change.
    """
    # The row lock also orders this edit with legal_hold_set, which locks the case first too.
    locked = Case.objects.select_for_update().get(pk=case.pk)
    if _hold_active(locked.pk):
        raise CaseUnderHold(_("This case is under legal hold: it is kept as it is and cannot be edited "
                              "until the hold is released."))
    if expected_version is not None and locked.version != expected_version:
        raise CaseConflict(_("Someone else changed this case (now version %(now)d, you edited version %(was)d). "
                             "Reload it and apply your change again.")
                           % {"now": locked.version, "was": expected_version})
    before = case_snapshot(locked)
    if facts is not None:
        locked.facts = _clean_facts(facts)
    if title is not None:
        locked.title = _clean_title(title, locked.facts)
    if offence_date is not None:
        locked.offence_date = _clean_date(offence_date)
    if defendants is not None:
        locked.defendants = _clean_defendants(defendants)
    after = case_snapshot(locked)
    changed = [name for name in EDITABLE_FIELDS if before[name] != after[name]]
    if not changed:
        return locked
    audit_before = _audit_view(Case.objects.get(pk=locked.pk))
    locked.version += 1
    locked.save()
    CaseRevision.objects.create(case=locked, version=locked.version, changed_by=user, changed_fields=changed,
                                before=before, after=after)
    audit_append(action="case.update", obj=locked, actor=user, before=audit_before,
                 after={**_audit_view(locked, confirmed), "changed_fields": changed})
    return locked
