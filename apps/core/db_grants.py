"""Apply the application role's privileges (apps/core/db_roles.py) to the connected database.

Run by ``manage.py migrate`` as the owner, after the migrations, so a new table or function is
covered the moment it exists; also by ``manage.py restore`` on the restored database.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection as default_connection
from django.db import transaction

from apps.core.db_roles import app_grants_sql


def graph_schemas(cursor) -> list[str]:
    """The schemas of the AGE graphs in this database."""
    cursor.execute("SELECT to_regclass('ag_catalog.ag_graph') IS NOT NULL")
    if not cursor.fetchone()[0]:
        return []
    cursor.execute("SELECT nspname FROM ag_catalog.ag_graph g JOIN pg_namespace n ON n.oid = g.namespace ORDER BY 1")
    return [row[0] for row in cursor.fetchall()]


def _existing(cursor) -> set[str]:
    cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                   "UNION SELECT 'fn:' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace")
    return {row[0] for row in cursor.fetchall()}


def app_grant_statements(cursor, app: str) -> list[str]:
    """The statements for this database (any DB-API cursor connected as the owner)."""
    return app_grants_sql(app=app, graph_schemas=graph_schemas(cursor), existing_tables=_existing(cursor))


def app_grants_apply(*, app: str | None = None, connection=None) -> list[str]:
    """Grant the application role its privileges; returns the statements run.

    Does nothing (returns []) when connected as the application role itself: only the owner
    can grant on its objects, and an application process must not try.
    """
    connection = connection or default_connection
    app = app or settings.DB_APP_USER
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        if cursor.fetchone()[0] == app:
            return []
        statements = app_grant_statements(cursor, app)
        for statement in statements:
            cursor.execute(statement)
    return statements
