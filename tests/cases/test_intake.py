"""Intake plausibility (issue 21, point 1): a future offence date is refused, a defendant who does
not occur in the facts needs the clerk's explicit (audited) confirmation, an offence date before the
statutes on file and facts that are not Chinese prose are warned about — on the pages and in the API,
through one service, and nothing is lost on a refusal."""

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from apps.cases.models import Case
from apps.cases.services.intake import (
    BEFORE_COVERAGE,
    DEFENDANT_ABSENT,
    NOT_CHINESE,
    OTHER_YEAR,
    IntakeUnconfirmed,
    case_intake,
    intake_check,
    mentioned_as_party,
)
from tests.cases.conftest import demo_case

pytestmark = pytest.mark.django_db

FACTS = demo_case("demo-case-001")["fact"]  # 王某、赵某; the victim of the fraud is 孙某某


def test_a_defendant_counts_only_as_a_person_of_their_own():
    assert mentioned_as_party("王某", FACTS) and mentioned_as_party("赵某", FACTS)
    assert "孙某某" in FACTS and not mentioned_as_party("孙某", FACTS), "孙某 only inside the victim 孙某某"
    assert not mentioned_as_party("刘某", FACTS), "刘某 is named only as the victim (被害人刘某)"
    assert mentioned_as_party("张三", "被告人张三于2018年盗窃。") and not mentioned_as_party("李四", "被告人张三盗窃。")


def test_a_future_offence_date_is_refused_and_nothing_is_saved(personas):
    tomorrow = timezone.localdate() + dt.timedelta(days=1)
    with pytest.raises(ValidationError) as refused:
        case_intake(user=personas.staff_a, team=personas.team_a, facts=FACTS, offence_date=tomorrow,
                    defendants=["王某"], confirmed=True)
    assert "offence_date" in refused.value.error_dict
    assert not Case.objects.exists()


def test_an_absent_defendant_needs_confirmation_which_is_audited(personas):
    with pytest.raises(IntakeUnconfirmed) as unconfirmed:
        case_intake(user=personas.staff_a, team=personas.team_a, facts=FACTS, offence_date=dt.date(2018, 9, 14),
                    defendants=["王某", "赵某", "孙某"])
    assert [f.code for f in unconfirmed.value.findings] == [DEFENDANT_ABSENT]
    assert "孙某" in unconfirmed.value.findings[0].message and "王某" not in unconfirmed.value.findings[0].message
    assert not Case.objects.exists()
    case, warnings = case_intake(user=personas.staff_a, team=personas.team_a, facts=FACTS,
                                 offence_date=dt.date(2018, 9, 14), defendants=["王某", "赵某", "孙某"], confirmed=True)
    assert warnings == []
    event = AuditEvent.objects.get(action="case.create", object_id=str(case.pk))
    assert event.after["confirmed"] == [DEFENDANT_ABSENT]
    assert "孙某" not in str(event.after), "the audit trail keeps no names"


def test_coverage_and_language_are_warnings_that_do_not_block(personas, judging_corpus):
    findings = intake_check(facts=FACTS, offence_date=dt.date(1990, 5, 1), defendants=["王某"])
    coverage = next(f for f in findings if f.code == BEFORE_COVERAGE)
    assert "中华人民共和国刑法" in coverage.message and "1997-10-01" in coverage.message
    english = intake_check(facts="The defendant Zhang stole a bicycle 🚲 worth 300 yuan.",
                           offence_date=dt.date(2018, 1, 1), defendants=["Zhang"])
    assert [f.code for f in english] == [NOT_CHINESE]
    case, warnings = case_intake(user=personas.staff_a, team=personas.team_a, facts="Zhang stole a bicycle.",
                                 offence_date=dt.date(2018, 1, 1), defendants=["Zhang"])
    assert case.pk and [w.code for w in warnings] == [NOT_CHINESE]
    assert intake_check(facts=FACTS, offence_date=dt.date(2018, 9, 14), defendants=["王某", "赵某"]) == []


def test_an_offence_date_in_a_year_the_facts_never_name_is_warned_about(personas, judging_corpus):
    # found walking as a clerk: facts of "2021年5月" filed with the offence date 2019-05-01, and no word about it
    facts = "2021年5月，被告人冯某在某工地盗窃钢管一批，经鉴定价值人民币6500元。被告人冯某曾于2015年因盗窃罪被判刑。"
    [finding] = intake_check(facts=facts, offence_date=dt.date(2019, 5, 1), defendants=["冯某"])
    assert finding.code == OTHER_YEAR and finding.field == "offence_date" and not finding.needs_confirmation
    assert "2015、2021" in finding.message and "2019-05-01" in finding.message
    assert intake_check(facts=facts, offence_date=dt.date(2021, 5, 3), defendants=["冯某"]) == []
    assert intake_check(facts="被告人冯某于某日在某工地盗窃钢管一批。", offence_date=dt.date(2019, 5, 1),
                        defendants=["冯某"]) == [], "facts that name no year are not second-guessed"
    case, warnings = case_intake(user=personas.staff_a, team=personas.team_a, facts=facts,
                                 offence_date=dt.date(2019, 5, 1), defendants=["冯某"])
    assert case.pk and [w.code for w in warnings] == [OTHER_YEAR], "saved, with the warning"


def test_the_form_asks_for_the_confirmation_and_keeps_what_was_typed(personas, judging_corpus):
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    form = {"team": personas.team_a.pk, "title": "", "offence_date": "2018-09-14", "defendants": "王某\n孙某",
            "facts": FACTS}
    page = client.post("/cases/new/", form)
    html = page.content.decode()
    assert page.status_code == 200 and 'id="intake-findings"' in html and 'name="confirm"' in html
    assert "孙某 does not occur in the facts" in html and FACTS[:30] in html, "the facts typed are kept"
    assert not Case.objects.exists()
    saved = client.post("/cases/new/", {**form, "confirm": "on"})
    assert saved.status_code == 302 and Case.objects.get().defendants == ["王某", "孙某"]
    future = client.post("/cases/new/", {**form, "offence_date": "3000-01-01", "confirm": "on"}).content.decode()
    assert "is in the future" in future and Case.objects.count() == 1
    english = client.post("/cases/new/", {**form, "defendants": "Li", "facts": "Li stole a phone.", "confirm": "on"},
                          follow=True).content.decode()
    assert "do not read as Chinese prose" in english and 'id="case-findings"' in english, "warned again before the run"


def test_the_api_uses_the_same_service(personas, judging_corpus):
    api = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    api.force_authenticate(personas.staff_a)
    body = {"team": personas.team_a.pk, "facts": FACTS, "offence_date": "2018-09-14", "defendants": ["王某", "孙某"]}
    refused = api.post("/api/v1/cases/", body, format="json")
    assert refused.status_code == 400 and refused.json()["needs_confirmation"] == [DEFENDANT_ABSENT]
    assert "孙某" in refused.json()["defendants"][0]
    future = api.post("/api/v1/cases/", {**body, "offence_date": "3000-01-01", "confirm_absent_defendants": True},
                      format="json")
    assert future.status_code == 400 and "offence_date" in future.json()
    created = api.post("/api/v1/cases/", {**body, "offence_date": "1990-01-01", "confirm_absent_defendants": True},
                       format="json")
    assert created.status_code == 201, created.content
    assert [w["code"] for w in created.json()["warnings"]] == [DEFENDANT_ABSENT, BEFORE_COVERAGE, OTHER_YEAR]
    edit = api.patch(f"/api/v1/cases/{created.json()['id']}/", {"version": 1, "defendants": ["王某", "钱某"]},
                     format="json")
    assert edit.status_code == 400 and edit.json()["needs_confirmation"] == [DEFENDANT_ABSENT]
