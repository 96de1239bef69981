"""I1 (tier C): 100 concurrent case submissions against gunicorn on 127.0.0.1, each followed
by a run request; only 2xx or 429, exactly one case and one run per accepted request, the
backlog drained by a real Celery worker; H7: database connections stay within the budget.

I2 (P): the same submission sent twice by a double click is two requests, and the API gives
two cases — recorded as open in docs/RELIABILITY.md (no idempotency key yet).
"""

import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.db import connection

from apps.accounts.models import Role, Team
from apps.accounts.services import user_create
from apps.cases.models import Case, JudgmentRun
from tests.cases.conftest import demo_case, ensure_judging_corpus
from tests.conftest import api_token_for, wait_for
from tests.faults import Gunicorn, WorkerProcess

pytestmark = [pytest.mark.c, pytest.mark.worker, pytest.mark.slow]

SUBMISSIONS = 100
USERS = 10
RUNS_PER_USER = 2  # the "runs" throttle for this server: the rest of the run requests get 429


def post(url: str, token: str, payload: dict) -> tuple[int, dict | None, float]:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST", headers={
        "Authorization": f"Token {token}", "Content-Type": "application/json", "Host": "127.0.0.1"})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 - loopback
            return response.status, json.loads(response.read() or b"null"), time.monotonic() - started
    except urllib.error.HTTPError as exc:
        return exc.code, None, time.monotonic() - started
    except OSError as exc:  # a refused or dropped connection counts as a failure of the server
        return 599, {"error": repr(exc)}, time.monotonic() - started


def connections_sampler(db: str, stop: threading.Event, seen: list):
    import psycopg

    s = settings.DATABASES["default"]
    with psycopg.connect(host=s["HOST"], port=s["PORT"], user=s["USER"], password=s["PASSWORD"], dbname=db,
                         autocommit=True) as conn:
        while not stop.is_set():
            seen.append(conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [db]).fetchone()[0])
            time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_i1_h7_100_concurrent_submissions_only_2xx_or_429_one_case_each_and_the_backlog_drains():
    ensure_judging_corpus()
    tag = uuid.uuid4().hex[:6]
    team = Team.objects.create(name=f"Load {tag}")
    tokens = [api_token_for(user_create(username=f"load_{tag}_{i}", password="load-password-1",
                                                     roles=[Role.STAFF], teams=[team])) for i in range(USERS)]
    db = connection.settings_dict["NAME"]
    queue = f"load-{tag}"
    record = demo_case()
    env = {"DB_NAME": db, "LEXTRACE_API_RATE_RUNS": f"{RUNS_PER_USER}/hour", "LEXTRACE_API_RATE_USER": "1000/hour",
           "CELERY_TASK_DEFAULT_QUEUE": queue}

    def submit(i: int):
        token = tokens[i % USERS]
        status, case, took = post(f"{base}/api/v1/cases/", token, {
            "team": team.pk, "title": f"load {tag} {i}", "facts": record["fact"], "offence_date": "2018-09-14",
            "defendants": record["defendants"]})
        result = {"case": status, "case_id": case and case.get("id"), "case_s": took}
        if status == 201:
            status, run, took = post(f"{base}/api/v1/cases/{case['id']}/runs/", token, {"strategy": "statistical"})
            result.update(run=status, run_id=run and run.get("id"), run_s=took)
        return result

    stop, seen = threading.Event(), []
    sampler = threading.Thread(target=connections_sampler, args=(db, stop, seen), daemon=True)
    with Gunicorn(env) as server:
        base = f"http://127.0.0.1:{server.port}"
        sampler.start()
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=SUBMISSIONS) as pool:
            results = list(pool.map(submit, range(SUBMISSIONS)))
        wall = time.monotonic() - started
        with WorkerProcess(broker_url=settings.REDIS_URL, db_name=db, queues=queue, env={"CELERY_TASK_DEFAULT_QUEUE": queue}):
            run_ids = [r["run_id"] for r in results if r.get("run") == 201]
            drain_started = time.monotonic()
            drained = wait_for(lambda: JudgmentRun.objects.filter(pk__in=run_ids, status="done").count() == len(run_ids),
                               timeout=240, interval=1)
            drain = time.monotonic() - drain_started
        stop.set()
    sampler.join(5)

    codes = Counter([r["case"] for r in results] + [r["run"] for r in results if "run" in r])
    latencies = sorted(r["case_s"] for r in results)
    p95 = latencies[int(0.95 * len(latencies)) - 1]
    print(f"I1: {SUBMISSIONS} submissions in {wall:.1f} s, status codes {dict(codes)}, case POST p95 {p95:.2f} s; "
          f"{len(run_ids)} runs drained in {drain:.1f} s; H7: at most {max(seen or [0])} connections to {db}")
    assert set(codes) <= {201, 429}, codes
    # Exactly one case per accepted case request, one run per accepted run request.
    accepted = [r["case_id"] for r in results if r["case"] == 201]
    assert len(accepted) == len(set(accepted)) == Case.objects.filter(team=team).count()
    assert sorted(run_ids) == sorted(JudgmentRun.objects.filter(case__team=team).values_list("pk", flat=True))
    assert len(run_ids) == USERS * RUNS_PER_USER and codes[429] == SUBMISSIONS - len(run_ids)
    assert drained, JudgmentRun.objects.filter(pk__in=run_ids).values_list("status").distinct()
    assert all(JudgmentRun.objects.get(pk=r).attempts.count() == 1 for r in run_ids)
    # H7: gunicorn (2 workers x 4 threads) + the worker + this test stay far below max_connections (100).
    assert max(seen) <= 2 * 4 + 2 + 4, seen
