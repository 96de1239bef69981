"""Delete cases past the retention period (LEXTRACE_RETENTION_DAYS), skipping cases under legal hold."""

from django.core.management.base import BaseCommand

from apps.review.services.holds import retention_purge


class Command(BaseCommand):
    help = "Purge cases untouched for longer than the retention period; held cases are kept."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=None, help="retention period (default: the setting)")
        parser.add_argument("--dry-run", action="store_true", help="list what would be purged, delete nothing")

    def handle(self, *args, days=None, dry_run=False, **options):
        report = retention_purge(days=days, dry_run=dry_run)
        verb = "would purge" if dry_run else "purged"
        done = report["candidates"] if dry_run else report["purged"]
        self.stdout.write(f"retention {report['days']} days: {verb} {len(done)} case(s) {done}; "
                          f"{report['held']} case(s) under legal hold kept")
