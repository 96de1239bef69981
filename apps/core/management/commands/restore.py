from django.core.management.base import BaseCommand, CommandError

from apps.core.backup import BackupError, Target, backup_restore


class Command(BaseCommand):
    help = ("Restore a pg_dump -Fc archive (from `manage.py backup`) into a NEW database on the configured server "
            "(or --host/--port). An existing database is never overwritten.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--database", required=True, help="name of the database to create and restore into")
        parser.add_argument("--host")
        parser.add_argument("--port", type=int)

    def handle(self, *args, path, database, host=None, port=None, **options):
        # As the owner role: it creates the database and owns what is restored (DB_OWNER_USER and
        # DB_OWNER_PASSWORD; docs/OPERATIONS.md, "Database roles").
        target = Target.from_settings(name=database, owner=True)
        target.host = host or target.host
        target.port = port or target.port
        try:
            done = backup_restore(path, target=target)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"restored {path} into {done['database']} on {target.host}:{target.port} "
                          f"in {done['seconds']} s; point DB_NAME at it and run `manage.py verify_audit_chain`")
