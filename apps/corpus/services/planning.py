"""What an import would do, decided before anything is written (the dry run).

A plan says, record by record, what happens to precedents and statute texts:
added, amended (a new version superseding the one in force), unchanged,
merged into a precedent we already have (same id, same normalised fact, or a
near duplicate), or refused with the reason. The dry run shows the plan; the
import computes it again inside its transaction (under the import lock, so it
sees every earlier import) and the appliers carry it out without deciding
anything themselves.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from apps.corpus.models import CRIMINAL_LAW, ArticleVersion, Precedent, PrecedentOutcome
from lexlib.parsing.dedup import near_duplicates, norm_sha256, norm_text
from lexlib.parsing.errors import LineError

_IMPORT_LOCK = "lextrace:corpus-import"


def import_lock() -> None:
    """Serialise imports (transaction-scoped): duplicate detection must see every earlier import."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [_IMPORT_LOCK])


# --- precedents ------------------------------------------------------------------------------


@dataclass
class CaseAction:
    line: int
    record: Any  # CaseRecord
    action: str  # add | unchanged | merge | refuse
    how: str = ""  # merge/unchanged: "id", "exact" or "near"
    target: str = ""  # the ext_id it equals or is merged into
    target_pk: int | None = None  # a stored precedent
    target_line: int | None = None  # an earlier record of this file
    containment: float | None = None
    reason: str = ""
    labels_differ: bool = False


@dataclass
class _Plan:
    actions: list = field(default_factory=list)

    def of(self, action: str) -> list:
        return [a for a in self.actions if a.action == action]

    @property
    def refused(self) -> list[LineError]:
        return [LineError(a.line, a.reason) for a in self.of("refuse")]


class CasePlan(_Plan):
    """One CaseAction per case record, in file order."""


def cases_plan(records: list[tuple[int, Any]]) -> CasePlan:
    """Decide every case record: same id, exact duplicate, near duplicate, or new."""
    plan = CasePlan()
    stored_by_id = {ext_id: (pk, sha, norm) for pk, ext_id, sha, norm in Precedent.objects.filter(
        ext_id__in=[r.id for _, r in records]).values_list("pk", "ext_id", "fact_sha256", "fact_norm_sha256")}
    from worker.agents.jsonhash import sha256_text

    pending: list[CaseAction] = []
    for line, rec in records:
        if rec.id in stored_by_id:
            pk, sha, norm = stored_by_id[rec.id]
            if sha == sha256_text(rec.fact):
                plan.actions.append(CaseAction(line, rec, "unchanged", how="id", target=rec.id))
            elif norm == norm_sha256(rec.fact):
                # The same fact but for whitespace or punctuation (CAIL ids come from the normalised fact).
                plan.actions.append(CaseAction(line, rec, "merge", how="exact", target=rec.id, target_pk=pk))
            else:
                plan.actions.append(CaseAction(line, rec, "refuse", reason=f"precedent {rec.id} already exists with a different fact text"))
            continue
        action = CaseAction(line, rec, "add")
        plan.actions.append(action)
        pending.append(action)

    keys = {id(a): norm_sha256(a.record.fact) for a in pending}
    stored_exact = {key: (pk, ext_id) for pk, ext_id, key in
                    Precedent.objects.filter(fact_norm_sha256__in=set(keys.values())).values_list("pk", "ext_id", "fact_norm_sha256")}
    first_in_file: dict[str, CaseAction] = {}
    remaining: list[CaseAction] = []
    for action in pending:
        key = keys[id(action)]
        if key in stored_exact:
            action.action, action.how = "merge", "exact"
            action.target_pk, action.target = stored_exact[key]
        elif key in first_in_file:
            kept = first_in_file[key]
            action.action, action.how, action.target, action.target_line = "merge", "exact", kept.record.id, kept.line
        else:
            first_in_file[key] = action
            remaining.append(action)

    if remaining:
        _near_duplicates(remaining)
    _mark_label_differences(plan)
    return plan


def _near_duplicates(candidates: list[CaseAction]) -> None:
    stored = list(Precedent.objects.order_by("pk").values_list("pk", "ext_id", "fact"))
    matches = near_duplicates([norm_text(fact) for _, _, fact in stored], [norm_text(a.record.fact) for a in candidates])
    for position, match in matches.items():
        action = candidates[position]
        action.action, action.how, action.containment = "merge", "near", match.containment
        if match.stored:
            action.target_pk, action.target = stored[match.other][0], stored[match.other][1]
        else:
            kept = candidates[match.other]
            action.target, action.target_line = kept.record.id, kept.line


def _mark_label_differences(plan: CasePlan) -> None:
    """A merged record whose charges differ from what it is merged into: the admin should look."""
    merged = plan.of("merge")
    stored_pks = {a.target_pk for a in merged if a.target_pk}
    stored_charges: dict[int, set[str]] = defaultdict(set)
    for pk, name in PrecedentOutcome.charges.through.objects.filter(precedentoutcome__precedent_id__in=stored_pks).values_list(
        "precedentoutcome__precedent_id", "charge__name"
    ):
        stored_charges[pk].add(name)
    by_line = {a.line: a for a in plan.actions}
    for action in merged:
        if action.target_pk:
            theirs = stored_charges[action.target_pk]
        else:
            theirs = set(by_line[action.target_line].record.charges)
        action.labels_differ = theirs != set(action.record.charges)


# --- statute texts ---------------------------------------------------------------------------------


@dataclass
class _Version:
    """A version as the plan sees it: stored (pk) or to be created by an earlier action (index)."""

    valid_from: dt.date | None
    valid_to: dt.date | None
    sha: str
    text: str
    pk: int | None = None
    index: int | None = None
    superseded: bool = False
    batch_id: int | None = None


@dataclass
class StatuteAction:
    line: int
    record: Any  # StatuteRecord
    action: str  # add | amend | unchanged | refuse
    reason: str = ""
    previous: _Version | None = None  # the version this one supersedes
    close_previous: bool = False  # an amendment ends the version in force the day before
    diff: str = ""


class StatutePlan(_Plan):
    """One StatuteAction per statute record, in file order (a new version's index is its record's)."""


def _overlaps(a_from, a_to, b_from, b_to) -> bool:
    lo, hi = dt.date.min, dt.date.max
    return (a_from or lo) <= (b_to or hi) and (b_from or lo) <= (a_to or hi)


def _in_force(version: _Version, day: dt.date) -> bool:
    return (version.valid_from is None or version.valid_from <= day) and (version.valid_to is None or day <= version.valid_to)


def statutes_plan(records: list[tuple[int, Any]], *, amendment: bool = False) -> StatutePlan:
    """Decide every statute record against the stored versions and the earlier records of the file.

    A text already stored (or in force on the record's valid_from) is unchanged. A new text
    overlapping no version is added. A changed text that is an amendment (marked, with its
    valid_from after the start of the version in force) adds a version that supersedes the one
    in force, which closes the day before. Anything else is refused with a diff: a version is
    never overwritten.
    """
    from apps.corpus.services.appliers import text_diff
    from worker.agents.jsonhash import sha256_text

    wanted = {(r.law or CRIMINAL_LAW, r.number, r.sub) for _, r in records}
    versions: dict[tuple[str, int, int], list[_Version]] = defaultdict(list)
    laws = {law for law, _, _ in wanted}
    stored = ArticleVersion.objects.filter(article__law__title__in=laws).values_list(
        "pk", "article__law__title", "article__number", "article__sub", "valid_from", "valid_to", "text_sha256", "text",
        "batch_id")
    superseded = set(ArticleVersion.objects.filter(supersedes__isnull=False, article__law__title__in=laws)
                     .values_list("supersedes_id", flat=True))
    for pk, law, number, sub, valid_from, valid_to, sha, text, batch_id in stored:
        if (law, number, sub) in wanted:
            versions[(law, number, sub)].append(_Version(valid_from, valid_to, sha, text, pk=pk,
                                                         superseded=pk in superseded, batch_id=batch_id))
    plan = StatutePlan()
    for index, (line, rec) in enumerate(records):
        known = sorted(versions[(rec.law or CRIMINAL_LAW, rec.number, rec.sub)],
                       key=lambda v: (v.valid_from is not None, v.valid_from or dt.date.min))
        sha = sha256_text(rec.text)
        same = [v for v in known if v.sha == sha and (rec.valid_from is None or v.valid_from == rec.valid_from)]
        if not same and rec.valid_from is not None:
            same = [v for v in known if v.sha == sha and _in_force(v, rec.valid_from)]
        if same:
            plan.actions.append(StatuteAction(line, rec, "unchanged"))
            continue
        new = _Version(rec.valid_from, rec.valid_to, sha, rec.text, index=index)
        open_version = next((v for v in known if v.valid_to is None), None)
        clash = [v for v in known if _overlaps(v.valid_from, v.valid_to, rec.valid_from, rec.valid_to)]
        is_amendment = (amendment or rec.amendment) and rec.valid_from is not None
        if not clash:
            earlier = [v for v in known if v.valid_to is not None and rec.valid_from and v.valid_to < rec.valid_from]
            previous = earlier[-1] if earlier and not earlier[-1].superseded else None
            if previous is not None:
                previous.superseded = True
            plan.actions.append(StatuteAction(line, rec, "add", previous=previous))
        elif (is_amendment and clash == [open_version]
              and (open_version.valid_from is None or open_version.valid_from < rec.valid_from)):
            plan.actions.append(StatuteAction(line, rec, "amend", previous=open_version, close_previous=True,
                                              diff=text_diff(open_version.text, rec.text)))
            open_version.valid_to = rec.valid_from - dt.timedelta(days=1)
            open_version.superseded = True
        else:
            old = clash[0]
            hint = "" if rec.valid_from else (" (an amendment needs its effective date: valid_from in JSONL, "
                                              "--effective-date or the form's effective date for a statute text)")
            if rec.valid_from and old.valid_from and rec.valid_from <= old.valid_from:
                hint = f" (the effective date {rec.valid_from} is not after the start of the version in force; a version is never overwritten)"
            elif rec.valid_from and not is_amendment:
                hint = " (mark the upload as an amendment to add a new version)"
            from worker.agents.numerals import article_label

            plan.actions.append(StatuteAction(
                line, rec, "refuse",
                reason=f"{article_label(rec.number, rec.sub)} conflicts with the stored version in force "
                       f"{old.valid_from or '…'}–{old.valid_to or '…'}{hint}:\n{text_diff(old.text, rec.text)}"))
            continue
        versions[(rec.law or CRIMINAL_LAW, rec.number, rec.sub)].append(new)
    return plan
