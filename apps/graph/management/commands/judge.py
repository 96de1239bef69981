import datetime as dt
import json

from django.core.management.base import BaseCommand, CommandError

from apps.judging.services import judgment_compute
from worker.agents.names import ABLATIONS, MODES
from worker.agents.types import CaseInput


class Command(BaseCommand):
    help = "Judge a case from the command line with the statistical strategy; prints one JSON bundle per defendant."

    def add_arguments(self, parser):
        parser.add_argument("--facts", required=True)
        parser.add_argument("--defendant", action="append", default=[], help="repeat for several defendants")
        parser.add_argument("--date", help="offence date YYYY-MM-DD (selects the article versions in force)")
        parser.add_argument("--ablation", default="full", choices=ABLATIONS)
        parser.add_argument("--mode", default="fixed", choices=MODES, help="fixed Researcher or the agentic planner")
        parser.add_argument("--summary", action="store_true", help="print one line per defendant instead of the bundle")

    def handle(self, *args, facts, defendant, date, ablation, summary, mode="fixed", **options):
        try:
            day = dt.date.fromisoformat(date) if date else None
        except ValueError as exc:
            raise CommandError(f"--date: {exc}") from exc
        bundles = judgment_compute(case=CaseInput(facts=facts, defendants=tuple(defendant), offence_date=day), ablation=ablation,
                                   mode=mode)
        for b in bundles:
            j = b.judgment
            if summary:
                steps = len(b.research.steps) if b.research else 0
                self.stdout.write(f"{b.defendant or '(case)'}: {j.status} {j.charges} {j.article_keys} {j.term} {j.message}"
                                  + (f" ({steps} planner steps)" if steps else ""))
            else:
                self.stdout.write(json.dumps(b.to_dict(), ensure_ascii=False, indent=1))
