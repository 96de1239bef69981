"""Intake plausibility: what a clerk is told before a case is saved or run.

Three kinds of finding, one service for the pages and the API:

* an error the service refuses outright (an offence date in the future: cases.py ``_clean_date``);
* a finding that needs the clerk's explicit confirmation before the case is saved: a defendant
  whose name does not occur in the facts as a person of its own (a typo, the wrong case pasted, or
  the victim 孙某某 taken for a defendant 孙某). The confirmation is recorded in the case's audit event;
* a warning that is shown but does not block: an offence date before the statutes on file begin
  (the version in force then is named), an offence date in a year the facts never name while they
  name others (a date typed wrong selects the wrong version of an article), and facts that are not
  Chinese prose (the pipeline reads Chinese court text; English or emoji facts end in "insufficient
  evidence"). The case page repeats the warnings beside the run button.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import Count, Min, Q
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.accounts.models import Team, User
from apps.cases.models import Case, CaseUpload
from apps.cases.services.cases import case_create, case_update, defendants_parse

DEFENDANT_ABSENT = "defendant_absent"
FUTURE_DATE = "future_date"
BEFORE_COVERAGE = "before_coverage"
NOT_CHINESE = "not_chinese"
OTHER_YEAR = "other_year"
# Confirmable findings block saving until the clerk confirms them; the others only warn.
CONFIRMABLE = frozenset({DEFENDANT_ABSENT})
# Refused outright at saving; listed as a finding only for a case saved before the rule existed.
REFUSED = frozenset({FUTURE_DATE})

# Facts are "Chinese prose" when at least this share of their letters are Chinese characters
# and there are at least this many of them (a court's statement of facts has hundreds).
CHINESE_SHARE_MIN = 0.6
CHINESE_CHARS_MIN = 10
# A year the facts state ("2021年5月", "2019 年"): the offence date should fall in one of them.
FACT_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})\s*年")


@dataclass(frozen=True)
class IntakeFinding:
    code: str
    field: str
    message: str

    @property
    def needs_confirmation(self) -> bool:
        return self.code in CONFIRMABLE


class IntakeUnconfirmed(ValidationError):
    """The case has findings the clerk has not confirmed; nothing was saved."""

    def __init__(self, findings: list[IntakeFinding]):
        self.findings = findings
        errors: dict[str, list[str]] = {}
        for f in findings:
            errors.setdefault(f.field, []).append(f.message)
        super().__init__(errors)


def _is_chinese(ch: str) -> bool:
    return ("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"
            or "\U00020000" <= ch <= "\U0002ebef")


def chinese_share(text: str) -> tuple[int, float]:
    """(Chinese characters, their share of all letters and symbols) in ``text``; digits,
    punctuation and spaces count for neither."""
    letters = [ch for ch in text or "" if unicodedata.category(ch)[0] in ("L", "S")]
    chinese = sum(1 for ch in letters if _is_chinese(ch))
    return chinese, (chinese / len(letters) if letters else 0.0)


# A defendant named only right after one of these is someone else in the facts.
_OTHER_ROLES = ("被害人", "证人", "报案人", "被害单位")


def mentioned_as_party(name: str, facts: str) -> bool:
    """Whether ``name`` occurs in the facts as a person of its own: not as the start of a longer
    pseudonym (孙某 inside 孙某某 is another person) and not only as the victim or a witness."""
    start = facts.find(name)
    while start != -1:
        after = facts[start + len(name):start + len(name) + 1]
        longer = name.endswith("某") and after == "某"
        other = any(facts[max(0, start - len(role)):start] == role for role in _OTHER_ROLES)
        if not longer and not other:
            return True
        start = facts.find(name, start + 1)
    return False


def statute_coverage() -> dict | None:
    """The earliest statute version on file — ``{"law", "valid_from"}`` — or None when some article's
    first version has no start date (in force since before any recorded version: no lower bound)."""
    from apps.corpus.models import ArticleVersion

    versions = ArticleVersion.objects.all()
    found = versions.aggregate(n=Count("pk"), open=Count("pk", filter=Q(valid_from__isnull=True)),
                               start=Min("valid_from"))
    if not found["n"] or found["open"]:
        return None
    start = found["start"]
    first = versions.filter(valid_from=start).select_related("article__law").order_by("article__law__title").first()
    return {"law": first.article.law.title, "valid_from": start}


_READ = object()


def intake_check(*, facts: str, offence_date: dt.date | None, defendants: Iterable[str],
                 coverage=_READ) -> list[IntakeFinding]:
    """Everything a clerk should know about these inputs before the case is saved or run.
    ``coverage``: ``statute_coverage()`` when the caller checks several cases at once."""
    findings: list[IntakeFinding] = []
    facts = facts or ""
    absent = [name for name in defendants if name and not mentioned_as_party(name, facts)]
    if absent:
        findings.append(IntakeFinding(DEFENDANT_ABSENT, "defendants", ngettext(
            "%(names)s does not occur in the facts as a person of its own (only inside a longer name, or as "
            "the victim or a witness, if at all). Check the spelling, or confirm that the case is to be saved "
            "as it is.",
            "%(names)s do not occur in the facts as persons of their own (only inside a longer name, or as "
            "the victim or a witness, if at all). Check the spelling, or confirm that the case is to be saved "
            "as it is.", len(absent)) % {"names": "、".join(absent)}))
    if offence_date and offence_date > timezone.localdate():
        findings.append(IntakeFinding(FUTURE_DATE, "offence_date", _(
            "The offence date %(date)s is in the future. Enter the day the offence was committed.")
            % {"date": offence_date.isoformat()}))
    if not offence_date:
        coverage = None
    elif coverage is _READ:
        coverage = statute_coverage()
    if coverage and offence_date < coverage["valid_from"]:
        findings.append(IntakeFinding(BEFORE_COVERAGE, "offence_date", _(
            "The offence date is before the statutes on file begin: the earliest version held is %(law)s as in force "
            "from %(date)s. Articles will be applied in that version, which was not yet law on the offence date.")
            % {"law": coverage["law"], "date": date_format(coverage["valid_from"], "Y-m-d")}))
    years = sorted({int(y) for y in FACT_YEAR.findall(facts)})
    if offence_date and years and offence_date.year not in years:
        findings.append(IntakeFinding(OTHER_YEAR, "offence_date", ngettext(
            "The facts name the year %(years)s but not %(year)d, the year of the offence date %(date)s. Check the "
            "offence date: it decides which version of each article is applied.",
            "The facts name the years %(years)s but not %(year)d, the year of the offence date %(date)s. Check the "
            "offence date: it decides which version of each article is applied.", len(years))
            % {"years": "、".join(map(str, years)), "year": offence_date.year, "date": offence_date.isoformat()}))
    chinese, share = chinese_share(facts)
    if facts.strip() and (chinese < CHINESE_CHARS_MIN or share < CHINESE_SHARE_MIN):
        findings.append(IntakeFinding(NOT_CHINESE, "facts", _(
            "The facts do not read as Chinese prose (%(share)d %% of the letters are Chinese characters). Lextrace "
            "reads Chinese court text: facts in another language or in symbols are likely to end in "
            "\"insufficient evidence\".") % {"share": round(share * 100)}))
    return findings


def case_findings(case: Case, *, coverage=_READ) -> list[IntakeFinding]:
    """``coverage``: ``statute_coverage()`` when the caller checks several cases at once."""
    return intake_check(facts=case.facts, offence_date=case.offence_date, defendants=case.defendants,
                        coverage=coverage)


def _unconfirmed(findings: list[IntakeFinding], confirmed: bool) -> None:
    errors = [f for f in findings if f.code in REFUSED]
    if errors:  # refused whatever is confirmed (the same rule as cases._clean_date)
        raise ValidationError({f.field: f.message for f in errors})
    blocking = [f for f in findings if f.needs_confirmation]
    if blocking and not confirmed:
        raise IntakeUnconfirmed(blocking)


def case_intake(*, user: User, team: Team, facts: str, offence_date: dt.date, defendants: Iterable[str],
                title: str = "", upload: CaseUpload | None = None,
                confirmed: bool = False) -> tuple[Case, list[IntakeFinding]]:
    """Save a case submitted by a clerk: refuse it while a finding needs confirmation that was not
    given; return it with the findings that remain as warnings."""
    names = list(defendants) if not isinstance(defendants, str) else defendants_parse(defendants)
    findings = intake_check(facts=facts, offence_date=offence_date, defendants=names)
    _unconfirmed(findings, confirmed)
    case = case_create(user=user, team=team, facts=facts, offence_date=offence_date, defendants=names, title=title,
                       upload=upload, confirmed=[f.code for f in findings if f.needs_confirmation])
    return case, [f for f in findings if not f.needs_confirmation and f.code not in REFUSED]


def case_revise(*, case: Case, user: User, expected_version: int | None = None, confirmed: bool = False,
                **changes) -> tuple[Case, list[IntakeFinding]]:
    """Edit a case with the intake checks applied to the case as it will be after the edit."""
    after = {"facts": case.facts, "offence_date": case.offence_date, "defendants": list(case.defendants)}
    after.update({k: v for k, v in changes.items() if k in after and v is not None})
    findings = intake_check(**after)
    _unconfirmed(findings, confirmed)
    updated = case_update(case=case, user=user, expected_version=expected_version,
                          confirmed=[f.code for f in findings if f.needs_confirmation], **changes)
    return updated, [f for f in findings if not f.needs_confirmation and f.code not in REFUSED]
