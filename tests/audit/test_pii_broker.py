"""C10: a case run end to end through the real broker and worker leaves no facts or names in Redis
or in the worker's log: task messages carry ids only."""

import datetime as dt

import pytest
import redis
from django.conf import settings

from apps.cases.models import JudgmentRun
from apps.cases.services.runs import judgment_request
from tests.cases.conftest import demo_case, live  # noqa: F401 - fixture
from tests.conftest import ARTIFACTS, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow]

SENTINEL = "哨兵XQ7Z证人"


def _redis_dump(client) -> str:
    parts = []
    for key in client.scan_iter(count=500):
        kind = client.type(key).decode()
        parts.append(key.decode("utf-8", "replace"))
        if kind == "string":
            parts.append(client.get(key).decode("utf-8", "replace"))
        elif kind == "list":
            parts += [v.decode("utf-8", "replace") for v in client.lrange(key, 0, -1)]
        elif kind == "hash":
            parts += [v.decode("utf-8", "replace") for kv in client.hgetall(key).items() for v in kv]
        elif kind == "set":
            parts += [v.decode("utf-8", "replace") for v in client.smembers(key)]
        elif kind == "zset":
            parts += [v.decode("utf-8", "replace") for v, _score in client.zrange(key, 0, -1, withscores=True)]
    return "\n".join(parts)


def test_facts_and_names_never_reach_the_broker_or_the_worker_log(live, celery_worker_process):
    from apps.cases.services.cases import case_create

    record = demo_case("demo-case-002")
    case = case_create(user=live.staff_a, team=live.team_a, title=f"{SENTINEL} title",
                       facts=record["fact"] + f"证人{SENTINEL}证实上述事实。", offence_date=dt.date(2009, 7, 1),
                       defendants=[f"李某{SENTINEL}"])
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    run = judgment_request(case=case, user=live.staff_a)
    queued = _redis_dump(client)  # the message may still be waiting here
    done = wait_for(lambda: JudgmentRun.objects.filter(pk=run.pk, status__in=["done", "failed"]).first(), timeout=120,
                    interval=0.5)
    assert done is not None, "the run did not finish"
    after = _redis_dump(client)
    for dump in (queued, after):
        assert SENTINEL not in dump and "李某" not in dump
    log = (ARTIFACTS / "celery-worker.log").read_text(encoding="utf-8", errors="replace")
    assert f"judgment run {run.pk}: attempt" in log, "the worker log names the run by id"
    assert SENTINEL not in log
