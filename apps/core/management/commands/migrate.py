"""Django's migrate, failing fast instead of queueing behind live traffic (RELIABILITY H5), and
granting the application role its privileges afterwards.

A migration that needs a lock another session holds (a long report reading a
table, a stuck transaction) would otherwise wait forever, and every request
touching that table would queue behind it. With ``lock_timeout`` set for the
migration's session, PostgreSQL cancels the waiting statement after
``LEXTRACE_MIGRATION_LOCK_TIMEOUT`` (default 5 s); the migration's transaction
rolls back whole and the command fails with "canceling statement due to lock
timeout", to be retried when the table is quiet.

Migrations run as the owner role (docs/OPERATIONS.md, "Database roles"); once they are
applied, the application role (``DB_APP_USER``) is given exactly the privileges of
apps/core/db_roles.py, so a table a migration added is usable, and an audit table is
append-only for it, from the first request on.
"""

from django.conf import settings
from django.core.management.commands import migrate
from django.db import connections

from apps.core.db_grants import app_grants_apply


class Command(migrate.Command):
    def handle(self, *args, **options):
        connection = connections[options["database"]]
        with connection.cursor() as cursor:
            # Session level: it holds for every migration's own transaction in this run.
            cursor.execute("SELECT set_config('lock_timeout', %s, false)", [settings.MIGRATION_LOCK_TIMEOUT])
        try:
            result = super().handle(*args, **options)
            if not options.get("check_unapplied") and not options.get("plan"):
                granted = app_grants_apply(connection=connection)
                if granted and options["verbosity"] >= 2:
                    self.stdout.write(f"granted the application role {settings.DB_APP_USER}: {len(granted)} statements")
            return result
        finally:
            if connection.connection is not None:
                with connection.cursor() as cursor:
                    cursor.execute("RESET lock_timeout")
