import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.judging.services import bundle_replay
from worker.agents.tools.replay import bundle_diff
from worker.agents.types import Bundle


class Command(BaseCommand):
    help = ("Replay stored evidence bundles on today's graph (LLM runs from their recorded replies, no model "
            "called) and print what changed, stage by stage.")

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--file", help="a bundle JSON file (one bundle or a list)")
        source.add_argument("--evaluation", type=int, metavar="RUN", help="an evaluation run (with --case)")
        parser.add_argument("--case", help="case id inside the evaluation run")

    def handle(self, *args, file, evaluation, case, **options):
        bundles = self._bundles(file, evaluation, case)
        changed = 0
        for stored in bundles:
            bundle = Bundle.from_dict(stored)
            replayed, unused = bundle_replay(bundle)
            rows = bundle_diff(bundle, replayed.to_dict())
            name = bundle.defendant or "(case)"
            if not rows:
                self.stdout.write(f"{name}: unchanged ({replayed.judgment.status})")
            else:
                changed += 1
                self.stdout.write(f"{name}: {len(rows)} difference(s)")
                for row in rows:
                    self.stdout.write(f"  [{row['stage']}] {row['what']}: {row['before']!r} → {row['after']!r}")
            if unused:
                self.stdout.write(f"  recorded replies not used: {unused}")
        self.stdout.write(f"{len(bundles)} bundle(s), {changed} changed")

    def _bundles(self, file, evaluation, case) -> list[dict]:
        if file:
            try:
                data = json.loads(Path(file).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(f"--file: {exc}") from exc
            bundles = data if isinstance(data, list) else [data]
            if not all(isinstance(b, dict) and "case" in b and "judgment" in b for b in bundles):
                raise CommandError("--file: not an evidence bundle (needs 'case' and 'judgment')")
            return bundles
        from apps.evaluation.models import EvaluationCase

        if not case:
            raise CommandError("--evaluation needs --case")
        found = EvaluationCase.objects.filter(run_id=evaluation, case_id=case).first()
        if found is None:
            raise CommandError(f"no case {case!r} in evaluation run {evaluation}")
        return found.bundles
