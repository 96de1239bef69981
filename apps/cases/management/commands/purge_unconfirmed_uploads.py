from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.cases.services.uploads import case_uploads_purge_unconfirmed


class Command(BaseCommand):
    help = ("Delete intake uploads that no case was saved from (the preview was never confirmed, or the case was "
            "deleted), older than --hours (default LEXTRACE_UPLOAD_UNCONFIRMED_HOURS). Run it from cron; each "
            "deletion is audited.")

    def add_arguments(self, parser):
        parser.add_argument("--hours", type=float, default=None)
        parser.add_argument("--dry-run", action="store_true", help="list what would be deleted")

    def handle(self, *args, hours=None, dry_run=False, **options):
        hours = settings.LEXTRACE_UPLOAD_UNCONFIRMED_HOURS if hours is None else hours
        pks = case_uploads_purge_unconfirmed(older_than=timedelta(hours=hours), dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        self.stdout.write(f"{verb} {len(pks)} unconfirmed upload(s) older than {hours:g} h: {pks}")
