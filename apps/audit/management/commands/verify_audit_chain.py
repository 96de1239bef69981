from django.core.management.base import BaseCommand, CommandError

from apps.audit.checkpoint import CheckpointError
from apps.audit.verify import chain_verify


class Command(BaseCommand):
    help = "Recompute the audit chain; exit non-zero and name the first broken seq if it does not verify."

    def add_arguments(self, parser):
        parser.add_argument("--anchor", metavar="FILE", help="a checkpoint written by audit_checkpoint to check against")

    def handle(self, *args, anchor=None, **options):
        try:
            report = chain_verify(anchor=anchor)
        except CheckpointError as exc:
            raise CommandError(f"anchor {anchor}: {exc}") from None
        if not report.ok:
            raise CommandError(report.summary())
        self.stdout.write(report.summary())
