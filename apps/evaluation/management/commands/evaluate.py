from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.evaluation.models import EvaluationRun
from apps.evaluation.services.evaluating import (
    DatasetError,
    evaluation_create,
    evaluation_execute,
    metrics_write,
)
from worker.agents.names import ABLATIONS, MODES, STRATEGIES


class Command(BaseCommand):
    help = ("Run the real pipeline over a labelled JSONL set (the ../shared/data case schema) and store every "
            "prediction, its evidence and the metrics (JSON + CSV).")

    def add_arguments(self, parser):
        parser.add_argument("--cases", help="labelled JSONL file")
        parser.add_argument("--strategy", default="statistical", choices=STRATEGIES)
        parser.add_argument("--ablation", default="full", choices=ABLATIONS)
        parser.add_argument("--mode", default="fixed", choices=MODES,
                            help="retrieval mode: the fixed Researcher or the agentic planner (Legal-R1)")
        parser.add_argument("--limit", type=int, help="only the first N records")
        parser.add_argument("--workers", type=int, default=1, help="parallel processes (default 1)")
        parser.add_argument("--label", default="")
        parser.add_argument("--resume", type=int, metavar="RUN", help="continue an interrupted run")
        parser.add_argument("--out", help="directory for metrics.json and metrics.csv (default MEDIA_ROOT/evaluations/RUN)")
        parser.add_argument("--exclude-self", action="store_true",
                            help="leave-one-out: the pipeline never retrieves the precedent whose id is the record's "
                                 "(for held-out cases of the corpus itself, e.g. training.statistical --export-heldout)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, cases, strategy, ablation, limit, workers, label, resume, out, no_progress, exclude_self,
               mode="fixed", **options):
        if (cases is None) == (resume is None):
            raise CommandError("give either --cases FILE or --resume RUN")
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        try:
            if resume is not None:
                run = EvaluationRun.objects.filter(pk=resume).first()
                if run is None:
                    raise CommandError(f"no evaluation run {resume}")
            else:
                path = Path(cases)
                if not path.is_file():
                    raise CommandError(f"--cases: no file {path}")
                run = evaluation_create(path=path, label=label, strategy=strategy, ablation=ablation, limit=limit,
                                        exclude_self=exclude_self, mode=mode)
            self.stdout.write(f"evaluation run {run.pk}: {run.label} — {run.total} records, {run.done} already done")
            bar = tqdm(total=run.total, initial=run.done, unit="case", disable=no_progress, dynamic_ncols=True)

            def progress(done: int, total: int) -> None:
                bar.n = done
                bar.refresh()

            try:
                run = evaluation_execute(run, workers=workers, progress=progress)
            finally:
                bar.close()
        except DatasetError as exc:
            raise CommandError(str(exc)) from exc
        except KeyboardInterrupt:
            raise CommandError(f"interrupted; continue with: python manage.py evaluate --resume {run.pk}") from None
        json_path, csv_path = metrics_write(run, out)
        self.stdout.write(summary_text(run.metrics) + f"written: {json_path} {csv_path}")


def summary_text(m: dict) -> str:
    """The metrics as printed: the paper's per-defendant protocol, then the per-record union and the rare slice."""
    pct = lambda v: "—" if v is None else f"{100 * v:.1f}"  # noqa: E731

    def block(r: dict, title: str) -> str:
        mae = r["term"]["mae"]
        return (f"{title} ({r['n']} entries)\n"
                f"  charges: accuracy {pct(r['charges']['accuracy'])}  micro-F1 {pct(r['charges']['micro_f1'])}\n"
                f"  articles: accuracy {pct(r['articles']['accuracy'])}  micro-F1 {pct(r['articles']['micro_f1'])}\n"
                f"  term: exact {pct(r['term']['exact'])}  MAE {'—' if mae is None else f'{mae:.2f}'} months\n"
                f"  traceable correct {pct(r['traceable_correct'])}  untraceable correct {pct(r['untraceable_correct'])}\n")

    text = block(m, "per defendant (the paper's protocol)")
    if m.get("per_record"):
        text += block(m["per_record"], "per record (union of the defendants)")
    rare = (m.get("slices") or {}).get("rare")
    if rare:
        d, r = rare["per_defendant"], rare["per_record"]
        text += (f"rare slice ({rare['records']} records, {rare['definition']}): charge accuracy {pct(d['charge_accuracy'])} "
                 f"per defendant, {pct(r['charge_accuracy'])} per record\n")
    cites = m.get("citations")
    if cites:
        text += f"articles cited in judgments: {cites['articles']}, without a supported checklist item: {cites['without_supported_item']}\n"
    text += f"statuses {m['status']}\n"
    if m.get("agentic"):
        text += f"agentic: {m['agentic']}\n"
    return text
