from django.core.management.base import BaseCommand

from apps.cases.services.reconcile import runs_reconcile


class Command(BaseCommand):
    help = ("Re-enqueue judgment runs whose task was lost (queued, or running without a heartbeat and without a "
            "live worker, for longer than LEXTRACE_RUNS_STUCK_AFTER seconds). Safe to run at any time, e.g. from cron.")

    def add_arguments(self, parser):
        parser.add_argument("--stuck-after", type=int, help="seconds (default: settings.RUNS_STUCK_AFTER_S)")
        parser.add_argument("--dry-run", action="store_true", help="only list what would be re-enqueued")

    def handle(self, *args, stuck_after=None, dry_run=False, **options):
        report = runs_reconcile(stuck_after_s=stuck_after, dry_run=dry_run)
        verb = "would re-enqueue" if dry_run else "re-enqueued"
        self.stdout.write(f"{verb} {len(report.queued)} queued and {len(report.stalled)} stalled run(s)"
                          + (f": {report.requeued}" if report.requeued else ""))
        if report.skipped_recent:
            self.stdout.write(f"already re-enqueued within the window: {report.skipped_recent}")
        if report.failed:
            self.stderr.write(f"the broker refused {len(report.failed)} run(s): {report.failed}")
