from django.core.management.base import BaseCommand, CommandError

from apps.evaluation.models import EvaluationRun
from apps.evaluation.services.evaluating import evaluation_compare


class Command(BaseCommand):
    help = "Print two or more evaluation runs side by side, with the difference to the first."

    def add_arguments(self, parser):
        parser.add_argument("runs", nargs="+", type=int)

    def handle(self, *args, runs, **options):
        if len(runs) < 2:
            raise CommandError("give at least two run ids")
        found = {r.pk: r for r in EvaluationRun.objects.filter(pk__in=runs)}
        missing = [pk for pk in runs if pk not in found]
        if missing:
            raise CommandError(f"no evaluation run {', '.join(map(str, missing))}")
        ordered = [found[pk] for pk in runs]
        unfinished = [r.pk for r in ordered if r.status != EvaluationRun.Status.DONE]
        if unfinished:
            raise CommandError(f"run(s) {', '.join(map(str, unfinished))} have not finished")
        rows = evaluation_compare(ordered)
        names = [k for k in rows[0] if k != "metric" and not k.startswith("delta_")] if rows else []
        self.stdout.write(f"{'metric':<28}" + "".join(f"{n[:24]:>26}" for n in names))
        for row in rows:
            cells = []
            for i, name in enumerate(names):
                value = row.get(name)
                text = "—" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)
                delta = row.get(f"delta_{name}")
                if i and delta is not None:
                    text += f" ({delta:+.4f})"
                cells.append(f"{text:>26}")
            self.stdout.write(f"{row['metric']:<28}" + "".join(cells))
