import json

from django.core.management.base import BaseCommand

from apps.cases.services.trajectories import trajectories_export


class Command(BaseCommand):
    help = ("Export the planner trajectories of approved agentic runs as chat JSONL for supervised fine-tuning "
            "(observations masked). With --bundles, write the bundles instead, for "
            "`python -m training.trajectories --exclude EVAL.jsonl` (contamination filter).")

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True)
        parser.add_argument("--lang", default="zh", choices=("zh", "en"))
        parser.add_argument("--bundles", action="store_true", help="write the raw bundles, not the conversations")

    def handle(self, *args, out, lang, bundles, **options):
        self.stdout.write(json.dumps(trajectories_export(out=out, lang=lang, raw_bundles=bundles)))
