"""Write SFT chat JSONL from reviewer-approved runs (overrides applied), minus evaluation overlap."""

from pathlib import Path

from django.core.management.base import BaseCommand

from apps.review.services.export import approved_sft_export


class Command(BaseCommand):
    help = "Export reviewer-approved runs (with overrides applied) as chat JSONL for supervised fine-tuning."

    def add_arguments(self, parser):
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument("--exclude", type=Path, action="append", default=[],
                            help="evaluation JSONL whose facts must not leak into training (repeatable)")
        parser.add_argument("--ngram", type=int, default=20)
        parser.add_argument("--lang", default="zh", choices=("zh", "en"))

    def handle(self, *args, out, exclude, ngram, lang, **options):
        report = approved_sft_export(out=out, exclude=exclude, ngram=ngram, lang=lang)
        self.stdout.write(f"{report['examples']} example(s) from {report['results_kept']} approved result(s) "
                          f"({report['results_dropped_contaminated']} dropped as overlapping an evaluation set): "
                          f"{report['per_stage']} → {out}")
