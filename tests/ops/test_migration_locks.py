"""H5: a migration that cannot get its lock fails fast instead of queueing traffic behind it."""

import time

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from apps.evaluation.models import EvaluationRun
from tests.conftest import as_owner

LAST = "0003_evaluationrun_mode"
BEFORE = "0002_exclude_self"


def _columns(table: str) -> set[str]:
    with connection.cursor() as cursor:
        return {c.name for c in connection.introspection.get_table_description(cursor, table)}


def _applied(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM django_migrations WHERE app = 'evaluation' AND name = %s", [name])
        return cursor.fetchone() is not None


@pytest.mark.django_db(transaction=True)
def test_a_migration_blocked_by_a_reader_gives_up_after_the_lock_timeout_and_changes_nothing(settings):
    table = EvaluationRun._meta.db_table
    db = connection.settings_dict
    settings.MIGRATION_LOCK_TIMEOUT = "1s"
    # Migrations are the owner role's (docs/OPERATIONS.md, "Database roles"); the reader is the application.
    with as_owner():
        call_command("migrate", "evaluation", BEFORE, verbosity=0)  # un-apply the last migration (drops a column)
    assert "mode" not in _columns(table)
    reader = psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], password=db["PASSWORD"],
                             dbname=db["NAME"])
    try:
        # A long report holds ACCESS SHARE on the table; ADD COLUMN needs ACCESS EXCLUSIVE.
        reader.execute(f"LOCK TABLE {table} IN ACCESS SHARE MODE")
        with as_owner():
            started = time.monotonic()
            with pytest.raises(Exception) as refused:
                call_command("migrate", "evaluation", verbosity=0)
            elapsed = time.monotonic() - started
            # The session is left as it was (no lock_timeout leaks into later work on this connection).
            with connection.cursor() as cursor:
                cursor.execute("SHOW lock_timeout")
                assert cursor.fetchone()[0] == "0"
        assert "lock timeout" in str(refused.value)
        assert elapsed < 10, elapsed
        # The migration's transaction rolled back whole: no column, no record of it.
        assert "mode" not in _columns(table) and not _applied(LAST)
    finally:
        reader.rollback()
        reader.close()
        with as_owner():
            call_command("migrate", "evaluation", verbosity=0)
    assert "mode" in _columns(table) and _applied(LAST)
