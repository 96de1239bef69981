import json

from django.core.management.base import BaseCommand, CommandError

from apps.core.drill import restore_drill


class Command(BaseCommand):
    help = ("Backup drill: dump the database (or take --archive), restore it into a fresh PostgreSQL cluster "
            "(initdb --data-checksums, 127.0.0.1, free port), then check migrations, the audit chain, row counts, "
            "a stored judgment and pg_amcheck there. The cluster is deleted afterwards.")

    def add_arguments(self, parser):
        parser.add_argument("--archive", help="restore this pg_dump -Fc archive instead of taking a new dump")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, archive=None, **options):
        report = restore_drill(archive=archive)
        if options["json"]:
            self.stdout.write(_dumps(report.as_dict()))
        else:
            for step in report.steps:
                self.stdout.write(f"{'ok  ' if step.ok else 'FAIL'} {step.name}: {step.detail}")
        if not report.ok:
            raise CommandError("the restore drill failed")
        self.stdout.write("restore drill passed")


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
