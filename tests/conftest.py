"""Shared fixtures: the personas every view test speaks about, and real services."""

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
import pytest_django.fixtures
from django.test import Client
from hypothesis import settings as hypothesis_settings

from apps.accounts.models import Role, Team
from apps.accounts.services import user_create

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
PASSWORD = "persona-password-1"


# pytest-django sets up only the databases that collected `django_db` tests name. Tests that
# reach the database through committed fixtures (`live`, `celery_worker_process`) carry no such
# mark, and run on their own they would write into the real DB_NAME. Always set up "default".
_databases_for_setup = pytest_django.fixtures._get_databases_for_setup


def _with_default_database(items):
    aliases, serialized = _databases_for_setup(items)
    return aliases | {"default"}, serialized


pytest_django.fixtures._get_databases_for_setup = _with_default_database


# --- the two database roles (apps/core/db_roles.py) ----------------------------------------------
# The test database is created and migrated by the owner role, as `make demo` migrates; the tests,
# and every worker, server and command they start, then run as the application role, so each test
# also checks that the application's privileges suffice. Two test-only additions, made by the owner
# in the test database alone: TRUNCATE on the managed tables (pytest-django's flush between
# transactional tests) and lextrace_test_as_owner(), through which the audit tests tamper with the
# trail as an owner could (apps/audit/migrations/0001_initial.py: the owner may disable triggers).
OWNER = os.environ.get("DB_OWNER_USER", "")
OWNER_PASSWORD = os.environ.get("DB_OWNER_PASSWORD", "")


def _use_credentials(user: str, password: str) -> None:
    from django.db import connection

    connection.close()
    connection.settings_dict["USER"], connection.settings_dict["PASSWORD"] = user, password


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """Create (and later drop) the test database as the owner role."""
    from django.conf import settings

    if OWNER:
        settings.DATABASES["default"]["USER"], settings.DATABASES["default"]["PASSWORD"] = OWNER, OWNER_PASSWORD


_TEST_ONLY_SQL = """
CREATE OR REPLACE FUNCTION lextrace_test_as_owner(statement text, triggers_off boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, ag_catalog, pg_temp AS $fn$
BEGIN
    IF triggers_off THEN
        ALTER TABLE audit_event DISABLE TRIGGER USER;
        ALTER TABLE audit_row_change DISABLE TRIGGER USER;
    END IF;
    EXECUTE statement;
    IF triggers_off THEN
        ALTER TABLE audit_event ENABLE TRIGGER USER;
        ALTER TABLE audit_row_change ENABLE TRIGGER USER;
    END IF;
END
$fn$;
REVOKE ALL ON FUNCTION lextrace_test_as_owner(text, boolean) FROM PUBLIC;
"""


def _test_only_grants() -> None:
    """As the owner, in the test database: what the suite needs beyond the application's privileges.
    Again after any migration a test runs, since migrate applies the production grants afresh."""
    from django.conf import settings
    from django.db import connection

    from apps.core.db_roles import APPEND_ONLY_TABLES, ident

    app = ident(settings.DB_APP_USER)
    tables = [t for t in connection.introspection.django_table_names(only_existing=True, include_views=False)
              if t not in APPEND_ONLY_TABLES]
    with connection.cursor() as cursor:
        cursor.execute(f"GRANT TRUNCATE ON {', '.join(ident(t) for t in tables)} TO {app}")
        cursor.execute(_TEST_ONLY_SQL)
        cursor.execute(f"GRANT EXECUTE ON FUNCTION lextrace_test_as_owner(text, boolean) TO {app}")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    from django.conf import settings

    if not OWNER:
        yield
        return
    with django_db_blocker.unblock():
        _test_only_grants()
        _use_credentials(settings.DB_APP_USER, os.environ.get("DB_PASSWORD", ""))
    yield
    with django_db_blocker.unblock():
        _use_credentials(OWNER, OWNER_PASSWORD)


@contextmanager
def as_owner():
    """Run the block connected as the owner role (migrations in a test), then as the app again."""
    from django.conf import settings

    if not OWNER:
        yield
        return
    _use_credentials(OWNER, OWNER_PASSWORD)
    try:
        yield
    finally:
        _test_only_grants()
        _use_credentials(settings.DB_APP_USER, os.environ.get("DB_PASSWORD", ""))


def sql_as_owner(statement: str, params=None, *, triggers_off: bool = False) -> None:
    """One statement executed by the owner role inside the caller's transaction (test database only)."""
    from django.db import connection

    with connection.cursor() as cursor:
        text = connection.ops.compose_sql(statement, params) if params else statement
        cursor.execute("SELECT lextrace_test_as_owner(%s, %s)", [text, triggers_off])


# Property tests: no per-example deadline (a loaded 2-core CI machine makes timing flaky), fixed
# derandomised examples so a run is repeatable; failures still show the falsifying example.
hypothesis_settings.register_profile("lextrace", deadline=None, derandomize=True, print_blob=True)
hypothesis_settings.load_profile("lextrace")


# Tiers of ../shared/RELIABILITY.md (docs/RELIABILITY.md maps each scenario to its tests).
TIERS = ("p", "c", "n", "gpu")
_HEAVY = ("worker", "browser", "llm")


def pytest_collection_modifyitems(config, items):
    """Give every test a tier marker and leave N (chaos) and G (GPU) tests out unless -m asks for them.

    A test without an explicit tier is C when it starts real processes (worker, browser, LLM server),
    P otherwise. `make test` runs P and C; `make chaos` runs `-m n`.
    """
    for item in items:
        if not any(item.get_closest_marker(t) for t in TIERS):
            heavy = any(item.get_closest_marker(m) for m in _HEAVY)
            item.add_marker(pytest.mark.c if heavy else pytest.mark.p)
    if config.getoption("markexpr", ""):
        return
    kept, left_out = [], []
    for item in items:
        (left_out if item.get_closest_marker("n") or item.get_closest_marker("gpu") else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


class Personas:
    """Staff of team A, staff of team B, a reviewer of both, an admin, and anonymous."""

    def __init__(self):
        self.team_a = Team.objects.create(name="Team A")
        self.team_b = Team.objects.create(name="Team B")
        self.staff_a = user_create(username="staff_a", password=PASSWORD, roles=[Role.STAFF], teams=[self.team_a])
        self.staff_b = user_create(username="staff_b", password=PASSWORD, roles=[Role.STAFF], teams=[self.team_b])
        self.reviewer = user_create(
            username="reviewer", password=PASSWORD, roles=[Role.REVIEWER], teams=[self.team_a, self.team_b]
        )
        self.admin = user_create(username="admin", password=PASSWORD, roles=[Role.ADMIN])

    def client(self, user=None, **kwargs) -> Client:
        client = Client(**kwargs)
        if user is not None:
            client.force_login(user)
        return client


@pytest.fixture
def personas(db) -> Personas:
    return Personas()


SHARED = Path(os.environ.get("LEXTRACE_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real corpus (../shared/data), read at run time; never copied into the repository."""
    if not (SHARED / "statutes.jsonl").is_file():
        pytest.skip(f"the shared corpus is not at {SHARED} (set LEXTRACE_SHARED_DATA)")
    return SHARED


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, artifacts_dir):
    """A real Celery worker process on the real Redis broker and the test database."""
    from django.db import connection

    from worker.celery import app

    app.control.purge()
    name = f"test-{uuid.uuid4().hex[:8]}@localhost"
    env = dict(os.environ, DB_NAME=connection.settings_dict["NAME"], DJANGO_SETTINGS_MODULE="legalsite.settings_test")
    log = open(artifacts_dir / "celery-worker.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "worker.celery:app", "worker", "--pool", "prefork",
         "--concurrency", "1", "--queues", "default,training,llm,ops", "--loglevel", "INFO", "--hostname", name],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"celery worker exited with {proc.returncode}; see {log.name}")
        replies = app.control.ping(destination=[name], timeout=0.5) or []
        if replies:
            break
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        raise RuntimeError("celery worker did not answer a ping within 60 s")
    yield proc
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    log.close()


def wait_for(predicate, *, timeout: float = 20.0, interval: float = 0.1):
    """Poll ``predicate`` until it returns a truthy value or the time is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


@pytest.fixture(scope="session")
def demo_site(artifacts_dir):
    """`make demo`'s start script (web + worker) on a database of its own, started once per session
    and shared by the browser tests of the cases and review pages."""
    from tests.browser_support import demo_server_running

    env = dict(os.environ, DJANGO_SETTINGS_MODULE="legalsite.settings")
    # The Chinese catalog is compiled by scripts/bootstrap.sh; make sure this checkout has it.
    subprocess.run([sys.executable, "manage.py", "compilemessages", "--ignore=.local", "--ignore=node_modules"],
                   cwd=ROOT, env=env, check=True, timeout=120, capture_output=True)
    # Not the test run's broker database: a worker started by other tests must not take the
    # demo's tasks (and the demo's worker must not take theirs).
    base, _, number = os.environ["REDIS_URL"].rpartition("/")
    with demo_server_running(artifacts_dir / "demo-site-server.log", db_name="lextrace_e2e_cases",
                             redis_url=f"{base}/{(int(number or 0) + 10) % 16}") as url:
        yield url


def api_token_for(user, *, scope: str = "write", days: int | None = None) -> str:
    """A real API token for ``user`` (through the minting service) and its secret. A reviewer's or an
    administrator's token is issued by an administrator, as the service requires."""
    from apps.accounts.models import User
    from apps.cases.services.api_tokens import api_token_mint, privileged

    issuer = user
    if privileged(user) and not user.has_role(Role.ADMIN):
        issuer = User.objects.filter(username="token_issuer").first() or user_create(
            username="token_issuer", password=PASSWORD, roles=[Role.ADMIN])
    _token, secret = api_token_mint(user=user, issuer=issuer, name="test token", scope=scope, days=days)
    return secret
