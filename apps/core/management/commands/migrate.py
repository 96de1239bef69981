"""Django's migrate, failing fast instead of queueing behind live traffic (RELIABILITY H5).

A migration that needs a lock another session holds (a long report reading a
table, a stuck transaction) would otherwise wait forever, and every request
touching that table would queue behind it. With ``lock_timeout`` set for the
migration's session, PostgreSQL cancels the waiting statement after
``LEXTRACE_MIGRATION_LOCK_TIMEOUT`` (default 5 s); the migration's transaction
rolls back whole and the command fails with "canceling statement due to lock
timeout", to be retried when the table is quiet.
"""

from django.conf import settings
from django.core.management.commands import migrate
from django.db import connections


class Command(migrate.Command):
    def handle(self, *args, **options):
        connection = connections[options["database"]]
        with connection.cursor() as cursor:
            # Session level: it holds for every migration's own transaction in this run.
            cursor.execute("SELECT set_config('lock_timeout', %s, false)", [settings.MIGRATION_LOCK_TIMEOUT])
        try:
            return super().handle(*args, **options)
        finally:
            if connection.connection is not None:
                with connection.cursor() as cursor:
                    cursor.execute("RESET lock_timeout")
