"""Recompute the snapshot of every approved run; invalidate (and audit) approvals whose evidence changed.

Run it on a schedule (cron or a Celery beat) as well: pages and the API verify on read."""

from django.core.management.base import BaseCommand

from apps.review.services.reviews import approvals_verify_all


class Command(BaseCommand):
    help = "Verify every approval against the current evidence; exit 1 if any was invalidated."

    def handle(self, *args, **options):
        checked, invalidated = approvals_verify_all()
        for d in invalidated:
            self.stdout.write(f"run {d.review.run_id}: approval {d.pk} invalidated: {d.invalidation_reason}")
        self.stdout.write(f"{checked} approval(s) checked, {len(invalidated)} invalidated")
        if invalidated:
            raise SystemExit(1)
