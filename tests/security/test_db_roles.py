"""The database roles (apps/core/db_roles.py; docs/OPERATIONS.md, "Database roles").

The suite itself runs as the application role (tests/conftest.py): every test that writes through
the services shows its privileges suffice. Here: that it is no superuser and owns nothing, that on
the audit tables it may only SELECT and INSERT, and that it can neither disable, drop or replace
the append-only guards nor alter or truncate the tables they guard.
"""

import re

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from apps.audit.services import audit_append
from apps.audit.verify import chain_verify
from apps.core.db_grants import app_grant_statements
from apps.core.db_roles import APPEND_ONLY_TABLES
from tests.conftest import sql_as_owner

pytestmark = pytest.mark.django_db
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "MAINTAIN")


def one(statement: str, params=None):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone()


def refused(statement: str) -> DatabaseError:
    """Run ``statement`` as the application role; it must fail for want of privilege."""
    with pytest.raises(DatabaseError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    cause = caught.value.__cause__
    assert getattr(cause, "sqlstate", None) == "42501", f"{statement}: {caught.value}"  # insufficient_privilege
    return caught.value


def owner() -> str:
    return one("SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = 'audit_event'")[0]


def test_the_application_role_is_no_superuser_owns_nothing_and_is_not_the_owner():
    me = one("SELECT current_user")[0]
    assert me == settings.DB_APP_USER and me != owner()
    flags = one("SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolreplication FROM pg_roles "
                "WHERE rolname = current_user")
    assert flags == (False, False, False, False, False)
    assert one("SELECT pg_has_role(current_user, %s, 'MEMBER')", [owner()])[0] is False
    owned = one("""SELECT (SELECT count(*) FROM pg_class WHERE relowner = r.oid),
                          (SELECT count(*) FROM pg_namespace WHERE nspowner = r.oid),
                          (SELECT count(*) FROM pg_proc WHERE proowner = r.oid),
                          (SELECT count(*) FROM pg_database WHERE datdba = r.oid)
                   FROM pg_roles r WHERE r.rolname = current_user""")
    assert owned == (0, 0, 0, 0), "tables, schemas, functions, databases owned by the application role"
    # Every table of the application and of the graph belongs to the owner.
    assert one("SELECT count(*) FROM pg_tables WHERE schemaname IN ('public', 'hierargraph') AND tableowner <> %s",
               [owner()])[0] == 0


@pytest.mark.parametrize("table", APPEND_ONLY_TABLES)
def test_on_the_audit_tables_the_application_may_only_select_and_insert(table):
    allowed = [p for p in PRIVILEGES if one("SELECT has_table_privilege(%s, %s)", [table, p])[0]]
    assert allowed == ["SELECT", "INSERT"]


GUARD_ATTACKS = [
    "ALTER TABLE audit_event DISABLE TRIGGER audit_event_no_update_delete",
    "ALTER TABLE audit_event DISABLE TRIGGER audit_event_no_truncate",
    "ALTER TABLE audit_event DISABLE TRIGGER USER",
    "ALTER TABLE audit_event DISABLE TRIGGER ALL",
    "ALTER TABLE audit_event DISABLE TRIGGER audit_event_link",
    "DROP TRIGGER audit_event_no_update_delete ON audit_event",
    "ALTER TABLE audit_event ADD COLUMN note text",
    "ALTER TABLE audit_event DROP CONSTRAINT audit_event_prev_hash_unique",
    "ALTER TABLE audit_event RENAME TO audit_event_old",
    "ALTER TABLE audit_event OWNER TO CURRENT_USER",
    "DROP TABLE audit_event",
    "TRUNCATE audit_event",
    "UPDATE audit_event SET reason = 'edited'",
    "DELETE FROM audit_event",
    "CREATE TRIGGER sneak BEFORE INSERT ON audit_event FOR EACH ROW EXECUTE FUNCTION audit_event_check_link()",
    # Replacing the trigger functions would neuter every guard at once.
    "CREATE OR REPLACE FUNCTION audit_event_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$",
    "CREATE OR REPLACE FUNCTION audit_event_check_link() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
    "ALTER FUNCTION audit_event_refuse_change() RENAME TO gone",
    "ALTER TABLE audit_row_change DISABLE TRIGGER USER",
    "ALTER TABLE audit_row_change ADD COLUMN note text",
    "TRUNCATE audit_row_change",
    "UPDATE audit_row_change SET tbl = 'x'",
    "DELETE FROM audit_row_change",
    # The row capture of the reviewed tables is a guard too.
    "ALTER TABLE cases_case DISABLE TRIGGER cases_case_row_capture",
    "DROP TRIGGER cases_case_row_capture ON cases_case",
    "CREATE OR REPLACE FUNCTION audit_row_capture() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$",
    # What a superuser would reach for.
    "SET session_replication_role = replica",
    "ALTER ROLE CURRENT_USER SUPERUSER",
    "ALTER ROLE CURRENT_USER BYPASSRLS",
    "CREATE TABLE public.shadow (i int)",
    "CREATE SCHEMA shadow",
]


@pytest.mark.parametrize("statement", GUARD_ATTACKS)
def test_the_application_role_cannot_disable_alter_or_truncate_what_guards_the_trail(events, statement):
    refused(statement)
    assert chain_verify().ok


def test_granting_itself_more_changes_nothing():
    # GRANT by a role without the grant option only warns; the privilege must still be absent.
    with connection.cursor() as cursor:
        cursor.execute("GRANT UPDATE, DELETE, TRUNCATE ON audit_event TO CURRENT_USER")
    for privilege in ("UPDATE", "DELETE", "TRUNCATE"):
        assert one("SELECT has_table_privilege('audit_event', %s)", [privilege])[0] is False


def test_appending_still_works_and_the_chain_verifies(events):
    with transaction.atomic():
        event = audit_append(action="test.role", after={"by": settings.DB_APP_USER})
    assert event.seq == events[-1].seq + 1 and chain_verify().ok


def test_the_graph_labels_and_the_index_ddl_are_the_owners():
    # New labels (tables) in the graph's schema: refused; the owner made the ones we need.
    refused("SELECT ag_catalog.create_vlabel('hierargraph', 'Intruder')")
    refused("CREATE INDEX shadow_idx ON corpus_densevector (object_id)")
    # The one piece of index DDL the application does goes through the owner's function, which
    # builds only an HNSW index of a dense search index.
    with pytest.raises(DatabaseError, match="is not a dense search index"), transaction.atomic():
        one("SELECT corpus_hnsw_index_create(%s, %s)", [-1, 8])
    with pytest.raises(DatabaseError, match="outside 1..2000"), transaction.atomic():
        one("SELECT corpus_hnsw_index_create(%s, %s)", [1, 0])


def test_migrate_grants_exactly_the_policy_and_no_truncate_outside_the_graph():
    """The production grants (the test database adds TRUNCATE for pytest-django's flush; applying
    the policy again, inside this test's transaction, takes it away)."""
    app = settings.DB_APP_USER
    with connection.cursor() as cursor:
        statements = app_grant_statements(cursor, app)
    for statement in statements:
        sql_as_owner(statement)

    def has(table, privilege):
        return one("SELECT has_table_privilege(%s, %s, %s)", [app, table, privilege])[0]

    assert all(has("cases_case", p) for p in ("SELECT", "INSERT", "UPDATE", "DELETE"))
    assert not any(has("cases_case", p) for p in ("TRUNCATE", "REFERENCES", "TRIGGER"))
    assert not any(has("django_migrations", p) for p in ("INSERT", "UPDATE", "DELETE", "TRUNCATE"))
    for table in APPEND_ONLY_TABLES:
        assert [p for p in PRIVILEGES if has(table, p)] == ["SELECT", "INSERT"]
    # The graph is the worker's to rebuild: emptied with TRUNCATE, refilled, analyzed.
    assert all(has('hierargraph."Case"', p) for p in ("SELECT", "INSERT", "DELETE", "TRUNCATE", "MAINTAIN"))
    assert one("SELECT has_function_privilege(%s, 'corpus_hnsw_index_create(bigint, integer)', 'EXECUTE')", [app])[0]
    # Nobody else may call the owner's function: no PUBLIC entry ("=X/…") in its ACL.
    acl = one("SELECT proacl::text FROM pg_proc WHERE proname = 'corpus_hnsw_index_create'")[0]
    assert f"{app}=X/" in acl and not re.search(r"[{,]=", acl), acl


@pytest.fixture
def events(db):
    with transaction.atomic():
        return [audit_append(action="test.role", object_id=str(i)) for i in range(3)]
