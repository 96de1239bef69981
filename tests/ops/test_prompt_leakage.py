"""F8: nothing of one matter reaches another through the model client, its cache or the logs.

A sentinel string is planted in team A's facts. It must reach the model in A's
run (the control: it is really sent), and appear nowhere in team B's requests
to the model, B's stored evidence, B's API answers, or any log record of
either run (the LLM client logs stages and errors, never prompts).
"""

import datetime as dt
import json
import logging
import uuid

import pytest
from django.test import override_settings

from apps.cases.models import DefendantResult
from apps.cases.services.runs import judgment_execute, judgment_request
from apps.core.operations import model_circuit
from tests.cases.conftest import demo_case
from worker.agents.testing.stub_server import StubServer


@pytest.fixture
def closed_circuit():
    circuit = model_circuit()
    circuit.reset()
    yield
    circuit.reset()


def _case(user, team, facts):
    from apps.cases.services.cases import case_create

    return case_create(user=user, team=team, facts=facts, offence_date=dt.date(2018, 9, 14),
                       defendants=demo_case("demo-case-001")["defendants"], title="F8 " + team.name)


def test_a_sentinel_in_one_teams_facts_reaches_nothing_of_another_team(personas, judging_corpus, closed_circuit,
                                                                       caplog):
    sentinel = f"哨兵{uuid.uuid4().hex[:12]}"
    record = demo_case("demo-case-001")
    case_a = _case(personas.staff_a, personas.team_a, record["fact"] + f"（卷宗内部编号{sentinel}）")
    case_b = _case(personas.staff_b, personas.team_b, record["fact"])
    caplog.set_level(logging.DEBUG)
    with StubServer() as stub, override_settings(LLM_BASE_URL=stub.url, LLM_MODEL="stub-model"):
        run_a = judgment_request(case=case_a, user=personas.staff_a, strategy="llm")
        judgment_execute(run_id=run_a.pk, worker="test")
        sent_a = json.dumps(stub.stats()["requests"], ensure_ascii=False)
        calls_a = stub.stats()["calls"]
        stub.reset()
        run_b = judgment_request(case=case_b, user=personas.staff_b, strategy="llm")
        judgment_execute(run_id=run_b.pk, worker="test")
        stats_b = stub.stats()
    # Control: A's facts really went to the model.
    assert calls_a > 0 and sentinel in sent_a
    # B's run called the model itself (no reply reused across matters) and never sent A's text.
    assert stats_b["calls"] > 0
    assert sentinel not in json.dumps(stats_b["requests"], ensure_ascii=False)
    for result in DefendantResult.objects.filter(run=run_b):
        assert sentinel not in json.dumps(result.bundle, ensure_ascii=False)
    reader_b = personas.client(personas.staff_b)
    for url in (f"/api/v1/runs/{run_b.pk}/", f"/api/v1/runs/{run_b.pk}/bundle/"):
        answer = reader_b.get(url)
        assert answer.status_code == 200 and sentinel not in answer.content.decode(), url
    # No log record of either run carries the facts.
    assert caplog.records, "the runs logged nothing at all; the check below would prove nothing"
    for rec in caplog.records:
        assert sentinel not in rec.getMessage(), (rec.name, rec.levelname)
