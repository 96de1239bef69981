"""I3 (tier N): a bounded soak. gunicorn and a worker under a steady trickle of submissions;
resident memory, open files and the queue must stay flat.

LEXTRACE_SOAK_SECONDS sets the length (default 180 s; the matrix asks for 30 minutes nightly).
"""

import json
import os
import statistics
import threading
import time
import urllib.request
import uuid

import psutil
import pytest
from django.conf import settings

from apps.accounts.models import Role, Team
from apps.accounts.services import user_create
from apps.cases.models import Case, JudgmentRun
from tests.cases.conftest import demo_case, ensure_judging_corpus
from tests.conftest import api_token_for, wait_for
from tests.faults import Gunicorn, WorkerProcess, own_queue, session_db_name

pytestmark = [pytest.mark.n, pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SOAK_S = float(os.environ.get("LEXTRACE_SOAK_SECONDS", "180"))


def tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def sample(pids: list[int]) -> tuple[int, int]:
    rss = fds = 0
    for pid in pids:
        for proc in tree(pid):
            try:
                rss += proc.memory_info().rss
                fds += proc.num_fds()
            except psutil.NoSuchProcess:
                pass
    return rss, fds


def test_i3_a_bounded_soak_keeps_memory_files_and_queue_flat():
    ensure_judging_corpus()
    tag = uuid.uuid4().hex[:6]
    team = Team.objects.create(name=f"Soak {tag}")
    user = user_create(username=f"soak_{tag}", password="soak-password-1", roles=[Role.STAFF], teams=[team])
    token = api_token_for(user)
    queue, record = own_queue(), demo_case()
    env = {"DB_NAME": session_db_name(), "LEXTRACE_API_RATE_USER": "100000/hour",
           "LEXTRACE_API_RATE_RUNS": "100000/hour", "CELERY_TASK_DEFAULT_QUEUE": queue}
    samples, errors, sent = [], [], 0
    with Gunicorn(env) as server, WorkerProcess(broker_url=settings.REDIS_URL, db_name=session_db_name(),
                                                 queues=queue, env={"CELERY_TASK_DEFAULT_QUEUE": queue}) as worker:
        base = f"http://127.0.0.1:{server.port}"

        def post(path, payload):
            request = urllib.request.Request(base + path, data=json.dumps(payload).encode(), method="POST", headers={
                "Authorization": f"Token {token}", "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as response:  # loopback
                return response.status, json.loads(response.read())

        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                rss, fds = sample([server.proc.pid, worker.proc.pid])
                samples.append((time.monotonic(), rss, fds, worker_queue_length()))
                stop.wait(2)

        def worker_queue_length():
            import redis

            return redis.Redis.from_url(settings.REDIS_URL).llen(queue)

        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        deadline = time.monotonic() + SOAK_S
        while time.monotonic() < deadline:
            try:
                _, case = post("/api/v1/cases/", {"team": team.pk, "title": f"soak {tag} {sent}",
                                                       "facts": record["fact"], "offence_date": "2018-09-14",
                                                       "defendants": record["defendants"]})
                if sent % 4 == 0:  # one run per four cases: about what the worker keeps up with
                    post(f"/api/v1/cases/{case['id']}/runs/", {"strategy": "statistical"})
                sent += 1
            except OSError as exc:
                errors.append(repr(exc))
            time.sleep(0.5)
        drained = wait_for(lambda: not JudgmentRun.objects.filter(case__team=team, status__in=["queued", "running"])
                           .exists(), timeout=180, interval=1)
        stop.set()
        thread.join(10)

    third = max(1, len(samples) // 3)
    first, last = samples[:third], samples[-third:]
    rss_first, rss_last = statistics.median(s[1] for s in first), statistics.median(s[1] for s in last)
    fds_first, fds_last = statistics.median(s[2] for s in first), statistics.median(s[2] for s in last)
    queue_max = max(s[3] for s in samples)
    growth = rss_last / rss_first - 1
    print(f"I3: {SOAK_S:.0f} s, {sent} cases sent, {len(errors)} errors; RSS median {rss_first / 2**20:.0f} → "
          f"{rss_last / 2**20:.0f} MiB ({growth:+.1%}); open files {fds_first:.0f} → {fds_last:.0f}; "
          f"queue at most {queue_max}")
    assert not errors, errors[:3]
    assert Case.objects.filter(team=team).count() == sent
    assert drained
    assert growth <= 0.10, growth
    assert fds_last <= fds_first + 10
    assert queue_max <= 10  # steady: the worker keeps up with the trickle
