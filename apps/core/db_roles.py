"""The two database roles and what each may do (docs/OPERATIONS.md, "Database roles").

* The **owner** (``DB_OWNER_USER``, default ``lextrace_owner``) owns the database, every table,
  sequence, function and trigger, and the AGE graph's schema. It runs ``manage.py migrate`` and
  restores. Not a superuser: it may create databases (test databases, restores) and nothing else.
* The **application** role (``DB_USER``, default ``lextrace``) is what the web and worker
  processes connect as. Not a superuser, owns nothing, cannot create databases or roles, no
  BYPASSRLS. It reads and writes the business tables, but on the append-only audit tables it may
  only SELECT and INSERT, so it can neither change nor remove an event, nor disable, drop or
  replace the triggers that guard them (only an owner can ALTER a table or replace its trigger
  function).

The extensions (vector, age, btree_gist) need a superuser to create; provisioning creates them
once per database as ``postgres``, and in ``template1`` so that every database created later
(pytest-django's test databases, restores, benchmarks) has them too.

The statements are produced here, in one place, and run by scripts/services.sh (cluster and
database set-up, as ``postgres``), apps.core.backup.ScratchCluster (the same for scratch clusters)
and ``manage.py migrate`` (the application grants, as the owner, after every migration). This
module imports nothing from Django: services.sh runs it with the system python3 before the
virtualenv matters:

    python3 apps/core/db_roles.py cluster  --owner O --app A     # passwords: $DB_OWNER_PASSWORD, $DB_PASSWORD
    python3 apps/core/db_roles.py database --owner O --app A
"""

from __future__ import annotations

import argparse
import os
import re
import sys

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# Tables whose rows are never changed or removed (apps/audit). The application role gets
# SELECT and INSERT on them and nothing else.
APPEND_ONLY_TABLES = ("audit_event", "audit_row_change")
# Tables the application reads but never writes.
READ_ONLY_TABLES = ("django_migrations",)
# SECURITY DEFINER functions the owner provides for the one piece of DDL the application does at
# run time (apps/corpus/migrations/0003_hnsw_functions.py); EXECUTE is revoked from PUBLIC.
DEFINER_FUNCTIONS = ("corpus_hnsw_index_create(bigint, integer)", "corpus_hnsw_index_drop(bigint)")
EXTENSIONS = ("vector", "age", "btree_gist")


def check_name(name: str) -> str:
    """A role or schema name we are willing to put into SQL (quoted as well, but checked first)."""
    if not _NAME.match(name or ""):
        raise ValueError(f"invalid role or schema name {name!r}: use lower-case letters, digits and _")
    return name


def ident(name: str) -> str:
    return '"' + check_name(name) + '"'


def literal(value: str) -> str:
    # standard_conforming_strings is on (the default since PostgreSQL 9.1): only quotes need doubling.
    if "\x00" in value:
        raise ValueError("a NUL character cannot be part of a password")
    return "'" + value.replace("'", "''") + "'"


def _role_sql(name: str, password: str, attributes: str) -> list[str]:
    role = ident(name)
    create = f"CREATE ROLE {role} LOGIN {attributes} PASSWORD {literal(password)}"
    alter = f"ALTER ROLE {role} LOGIN {attributes} PASSWORD {literal(password)}"
    # Created once; on every later start the attributes are put back as designed (an application
    # role left over as a superuser by an older version loses that here).
    return [f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {literal(name)}) "
            f"THEN EXECUTE {literal(create)}; ELSE EXECUTE {literal(alter)}; END IF; END $$"]


OWNER_ATTRIBUTES = "NOSUPERUSER CREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT"
APP_ATTRIBUTES = "NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT"


def cluster_sql(*, owner: str, owner_password: str, app: str, app_password: str) -> list[str]:
    """As a superuser, in any database: the two roles (created or normalised)."""
    if check_name(owner) == check_name(app):
        raise ValueError("the owner and the application role must be different roles")
    return [
        *_role_sql(owner, owner_password, OWNER_ATTRIBUTES),
        *_role_sql(app, app_password, APP_ATTRIBUTES),
        # The application role must not act as the owner through membership either.
        f"DO $$ BEGIN IF EXISTS (SELECT FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid "
        f"JOIN pg_roles u ON u.oid = m.member WHERE r.rolname = {literal(owner)} AND u.rolname = {literal(app)}) "
        f"THEN EXECUTE {literal(f'REVOKE {ident(owner)} FROM {ident(app)}')}; END IF; END $$",
    ]


def database_sql(*, owner: str, app: str) -> list[str]:
    """As a superuser, connected to one database (template1 included): extensions, AGE's catalog.

    REASSIGN OWNED makes the owner own whatever the application role may own (an older set-up ran
    everything as the application role); on a correct database it changes nothing.
    """
    owner_q, app_q = ident(owner), ident(app)
    return [
        *[f"CREATE EXTENSION IF NOT EXISTS {ext}" for ext in EXTENSIONS],
        f"REASSIGN OWNED BY {app_q} TO {owner_q}",
        # AGE's functions look the catalog up by themselves; these grants cover the SQL that reads it
        # (apps/graph/age.py) and, for the owner, pg_restore writing its rows back (they are
        # configuration tables, so pg_dump dumps their data).
        f"GRANT USAGE ON SCHEMA ag_catalog TO {owner_q}, {app_q}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ag_catalog.ag_graph, ag_catalog.ag_label TO {owner_q}",
        f"GRANT SELECT ON ag_catalog.ag_graph, ag_catalog.ag_label TO {app_q}",
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
    ]


def app_grants_sql(*, app: str, graph_schemas: list[str], existing_tables: set[str] | None = None) -> list[str]:
    """As the owner, after migrating: exactly the privileges the application role needs.

    Everything is revoked first and granted again in the same transaction, so the result is the
    policy below whatever was granted before. ``existing_tables`` limits the table-specific
    statements to tables that exist (a partially migrated database).
    """
    app_q = ident(app)
    have = (lambda t: True) if existing_tables is None else (lambda t: t in existing_tables)
    out = [
        f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {app_q}",
        f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {app_q}",
        f"GRANT USAGE ON SCHEMA public TO {app_q}",
        # MAINTAIN: ANALYZE after bulk loads (apps/core/dbstats.py). No TRUNCATE, REFERENCES or TRIGGER.
        f"GRANT SELECT, INSERT, UPDATE, DELETE, MAINTAIN ON ALL TABLES IN SCHEMA public TO {app_q}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app_q}",
    ]
    for table in APPEND_ONLY_TABLES:
        if have(table):
            out.append(f"REVOKE UPDATE, DELETE, MAINTAIN ON {ident(table)} FROM {app_q}")
    for table in READ_ONLY_TABLES:
        if have(table):
            out.append(f"REVOKE INSERT, UPDATE, DELETE, MAINTAIN ON {ident(table)} FROM {app_q}")
    for function in DEFINER_FUNCTIONS:
        name = function.split("(", 1)[0]
        if have("fn:" + name):
            out.append(f"REVOKE ALL ON FUNCTION {function} FROM PUBLIC")
            out.append(f"GRANT EXECUTE ON FUNCTION {function} TO {app_q}")
    # The AGE graph is a projection of the relational tables that the worker rebuilds
    # (apps/graph/services/projection.py): it empties the label tables with TRUNCATE, fills them
    # and ANALYZEs them. Its labels and indexes are created by migrations, as the owner.
    for schema in graph_schemas:
        schema_q = ident(schema)
        out += [
            f"GRANT USAGE ON SCHEMA {schema_q} TO {app_q}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE, MAINTAIN ON ALL TABLES IN SCHEMA {schema_q} TO {app_q}",
            f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {schema_q} TO {app_q}",
        ]
    return out


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Print the SQL that sets up Lextrace's database roles.")
    parser.add_argument("what", choices=["cluster", "database"])
    parser.add_argument("--owner", required=True)
    parser.add_argument("--app", required=True)
    args = parser.parse_args(argv)
    if args.what == "cluster":
        statements = cluster_sql(owner=args.owner, owner_password=os.environ.get("DB_OWNER_PASSWORD", ""),
                                 app=args.app, app_password=os.environ.get("DB_PASSWORD", ""))
    else:
        statements = database_sql(owner=args.owner, app=args.app)
    sys.stdout.write("".join(s + ";\n" for s in statements))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
