"""Schemathesis against a running server (gunicorn on the test database): no request the schema
allows, or any malformed variant of one, makes the API answer with a 5xx, for a token of each role.
Bounded to SECONDS_PER_ROLE per role (about two minutes in all)."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from apps.cases.services.runs import judgment_execute
from tests.cases.conftest import make_case, make_run
from tests.conftest import api_token_for

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def api_server(live, artifacts_dir):
    port = free_port()
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="legalsite.settings_test",
        DB_NAME=connection.settings_dict["NAME"],
        # Runs the fuzzer starts are queued in the server's memory: no worker executes them.
        CELERY_BROKER_URL="memory://",
        LEXTRACE_API_RATE_USER="1000000/hour",
        LEXTRACE_API_RATE_RUNS="1000000/hour",
    )
    log = open(artifacts_dir / "api-fuzz-server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "legalsite.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--threads", "4", "--timeout", "60"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"gunicorn exited with {proc.returncode}; see {log.name}")
        try:
            urllib.request.urlopen(base + "/healthz", timeout=2)
            break
        except OSError as exc:
            if getattr(exc, "code", None):  # an HTTP status: the server answers
                break
            time.sleep(0.3)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the API server did not start within 60 s")
    yield base
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    log.close()


ROLES = ("staff_a", "reviewer", "admin")
SECONDS_PER_ROLE = 35


@pytest.fixture
def fuzz_users(live):
    """The live staff member, a reviewer of both live teams and an administrator. Whatever the
    fuzzer did to the teams' cases (holds, decisions) is undone with them afterwards."""
    import uuid

    from django.db import transaction
    from django.utils import timezone

    from apps.accounts.models import Role, User
    from apps.accounts.services import user_create
    from apps.cases.models import Case
    from apps.review.models import LegalHold
    from tests.conftest import PASSWORD

    tag = uuid.uuid4().hex[:6]
    reviewer = user_create(username=f"fuzz_reviewer_{tag}", password=PASSWORD, roles=[Role.REVIEWER],
                           teams=[live.team_a, live.team_b])
    admin = user_create(username=f"fuzz_admin_{tag}", password=PASSWORD, roles=[Role.ADMIN])
    try:
        yield {"staff_a": live.staff_a, "reviewer": reviewer, "admin": admin}
    finally:
        teams = [live.team_a, live.team_b]
        with transaction.atomic(), connection.cursor() as cursor:
            LegalHold.objects.filter(case__team__in=teams, released_at__isnull=True).update(
                released_at=timezone.now(), released_by=admin, release_reason="fuzz clean-up")
            cursor.execute("SET LOCAL lextrace.purge = 'on'")  # decisions may go with their cases
            Case.objects.filter(team__in=teams).delete()
        User.objects.filter(pk__in=[reviewer.pk, admin.pk]).delete()


@pytest.mark.parametrize("role", ROLES)
def test_schemathesis_finds_no_server_error(live, fuzz_users, api_server, artifacts_dir, tmp_path, role):
    """The whole OpenAPI schema (every operation, valid and malformed requests, NUL bytes allowed)
    with a read-and-write token of each role: staff write cases and runs, reviewers decide and
    hold, administrators delete. Only statuses below 500 are accepted."""
    token = api_token_for(fuzz_users[role])
    # Real objects for the fuzzer to find besides the random ids: a judged run and a queued one.
    case = make_case(live.staff_a, live.team_a)
    judgment_execute(run_id=make_run(case, live.staff_a).pk, worker="fuzz-setup")
    make_run(case, live.staff_a)
    report = artifacts_dir / f"schemathesis-{role}.txt"
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{api_server}/api/schema/",
        "--header", f"Authorization: Token {token}",
        "--checks", "not_a_server_error",
        "--max-time", str(SECONDS_PER_ROLE), "--max-examples", "30", "--workers", "1", "--request-timeout", "20",
        "--seed", "20261203", "--generation-database", "none", "--no-color",
    ]
    # In a scratch directory: schemathesis keeps a cache (.schemathesis/) in its working directory.
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=SECONDS_PER_ROLE + 100,
                            check=False)
    report.write_text(result.stdout + "\n" + result.stderr)
    assert result.returncode == 0, f"schemathesis reported problems; see {report}\n{result.stdout[-4000:]}"
    summary = re.search(r"(\d+) generated, (\d+) passed", result.stdout)
    assert summary and summary[1] == summary[2] and int(summary[1]) > 100, result.stdout[-2000:]
    operations = re.search(r"Operations:\s+(\d+) selected / (\d+) total", result.stdout)
    print(f"schemathesis as {role}: {summary[1]} generated, {summary[2]} passed"
          + (f", {operations[1]} of {operations[2]} operations" if operations else ""))
