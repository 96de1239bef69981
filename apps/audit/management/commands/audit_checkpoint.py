from django.core.management.base import BaseCommand, CommandError

from apps.audit.checkpoint import CheckpointError, checkpoint_create
from apps.audit.verify import chain_verify


class Command(BaseCommand):
    help = ("Verify the audit chain and write a signed checkpoint of its head (seq, hash, count, time). "
            "Copy it to write-once storage; verify_audit_chain --anchor FILE checks the chain against it.")

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, metavar="FILE", help="where to write it ('-' for stdout); never overwritten")
        parser.add_argument("--previous", metavar="FILE", help="the last checkpoint: refuse to write if the chain no longer matches it")

    def handle(self, *args, out, previous=None, **options):
        try:
            report = chain_verify(anchor=previous)
        except CheckpointError as exc:
            raise CommandError(f"previous checkpoint {previous}: {exc}") from None
        if not report.ok:
            # Anchoring a broken chain would certify the damage.
            raise CommandError(f"no checkpoint written: {report.summary()}")
        checkpoint = checkpoint_create(head_seq=report.head_seq, head_hash=report.head_hash, count=report.count)
        if out == "-":
            self.stdout.write(checkpoint.dumps(), ending="")
            return
        try:
            with open(out, "x", encoding="utf-8") as fh:
                fh.write(checkpoint.dumps())
        except FileExistsError:
            raise CommandError(f"{out} exists; checkpoints are never overwritten") from None
        self.stdout.write(f"checkpoint written to {out}: {report.summary()}")
