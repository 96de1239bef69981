from datetime import UTC, datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.core.backup import BackupError, backup_create


class Command(BaseCommand):
    help = "Dump the database with pg_dump -Fc (custom format) to a file, with a .sha256 beside it."

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", help="the archive to write (default: backups/lextrace-<UTC time>.dump)")

    def handle(self, *args, path=None, **options):
        if not path:
            path = Path("backups") / f"lextrace-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.dump"
        try:
            done = backup_create(path)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{done['path']}: database {done['database']}, {done['bytes']} bytes, "
                          f"sha256 {done['sha256']}, {done['seconds']} s")
