import time

from django.core.management.base import BaseCommand, CommandError

from apps.registry.models import TrainingRun
from apps.registry.training import training_execute


class Command(BaseCommand):
    help = ("Train every statistical model (charges, articles, term, checklist verifier, intent classifier) from the "
            "current corpus in the database, evaluate each next to the active one on the same held-out cases, and "
            "activate them only if the gate passes (the same job as retraining from the models page).")

    def add_arguments(self, parser):
        parser.add_argument("--cases", default="corpus",
                            help="'corpus' (export the database's labelled precedents, default) or a cases JSONL file")

    def handle(self, *args, cases, **options):
        started = time.perf_counter()
        run = training_execute(TrainingRun.objects.create(source=cases).pk)
        wall = time.perf_counter() - started
        lines = run.log_tail.splitlines()
        start = next((i for i, line in enumerate(lines) if line.startswith("model ")), len(lines))
        for line in lines[start:]:
            if not line.strip():
                break
            self.stdout.write(line)
        if run.status == TrainingRun.Status.FAILED:
            self.stderr.write(run.log_tail)
        for row in run.gate:
            active = "none" if row["active"] is None else f"{row['active']:.4f}"
            self.stdout.write(f"gate {row['kind']:9s} {row['metric']} candidate {row['candidate']:.4f} active {active} "
                              f"-> {'pass' if row['passed'] else 'REFUSED'}")
        self.stdout.write(f"training run {run.pk}: {run.status}; {run.message}; wall {wall:.1f} s")
        if run.status == TrainingRun.Status.FAILED:
            raise CommandError(run.message)
