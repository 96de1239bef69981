from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.evaluation.models import EvaluationRun


class Command(BaseCommand):
    help = "Write static PNG plots (accuracy per run, per category, cost) of finished evaluation runs."

    def add_arguments(self, parser):
        parser.add_argument("runs", nargs="+", type=int)
        parser.add_argument("--out", default="docs/img", help="directory (default docs/img)")

    def handle(self, *args, runs, out, **options):
        try:
            from apps.evaluation.plots import plots_write
        except ImportError as exc:  # matplotlib is a development dependency
            raise CommandError(f"plots need matplotlib (requirements-dev.txt): {exc}") from exc
        found = {r.pk: r for r in EvaluationRun.objects.filter(pk__in=runs, status=EvaluationRun.Status.DONE)}
        missing = [pk for pk in runs if pk not in found]
        if missing:
            raise CommandError(f"no finished evaluation run {', '.join(map(str, missing))}")
        for path in plots_write([found[pk] for pk in runs], Path(out)):
            self.stdout.write(str(path))
