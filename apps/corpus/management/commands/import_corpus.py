import datetime as dt
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.corpus.models import ImportBatch
from lexlib.parsing.errors import ImportValidationError
from lexlib.parsing.formats import FORMATS
from apps.corpus.services.importing import ImportOptions, corpus_check, corpus_import
from apps.corpus.services.import_units import import_units, report_lines


class Command(BaseCommand):
    help = (
        "Import corpus files. PATH is a file or a directory: a directory laid out like ../shared/data "
        "(statutes, interpretations, checklists, charge tables, cases; imported in dependency order), a CAIL2018 "
        "download (every .json file), a folder of LeCaRD files, or a folder of judgments (TXT/DOCX/PDF). "
        "Each file is all-or-nothing; a folder of judgments or LeCaRD candidate files is one import. "
        "--dry-run reports what would be added, amended, merged as duplicates and refused, and writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", default="auto", choices=("auto", *FORMATS),
                            help="the input format (default: detected when unambiguous)")
        parser.add_argument("--dry-run", action="store_true", help="report what the import would do; write nothing")
        parser.add_argument("--yes", action="store_true",
                            help="publish parsed judgments without asking (you have checked the dry run)")
        parser.add_argument("--amendment", action="store_true", help="changed article texts are amendments (new versions)")
        parser.add_argument("--law", default="", help="the law's title, for a statute text (TXT/DOCX/PDF)")
        parser.add_argument("--effective-date", type=dt.date.fromisoformat, default=None, metavar="YYYY-MM-DD",
                            help="statute text: the date the amended text takes effect; changed articles get a new "
                                 "version from that day, superseding the one in force")
        parser.add_argument("--version-label", default="", help="statute text: e.g. 刑法修正案（十一）, kept with each new version")
        parser.add_argument("--source", default="", help="CAIL2018: the precedents' source label (default cail2018)")
        parser.add_argument("--skip-refused", action="store_true",
                            help="publish the acceptable records of a file and leave the refused ones out (they are listed)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, path, format, dry_run, yes, amendment, law, effective_date, version_label, source,
               skip_refused, no_progress, **options):
        root = Path(path)
        if not root.exists():
            raise CommandError(f"{root}: no such file or directory")
        base = ImportOptions(format=format, amendment=amendment, law_title=law, effective_date=effective_date,
                             version_label=version_label, source=source, skip_refused=skip_refused)
        try:
            units = import_units(root, format)
        except (ValueError, ImportValidationError) as exc:
            raise CommandError(str(exc)) from None
        show_progress = not no_progress and self.stdout.isatty()
        for unit in units:
            unit_options = ImportOptions(**{**base.__dict__, "format": unit.format})
            if dry_run or unit.format == "judgment":
                self._check(unit, unit_options, show_progress, dry_run=dry_run)
                if dry_run:
                    continue
                self._confirm(unit, yes)
                unit_options.confirmed = True
            batch = self._import(unit, unit_options, show_progress)
            self._print_batch(unit, batch)

    def _bar(self, name: str, enabled: bool):
        bar = tqdm(desc=name, unit="rec", disable=not enabled, leave=False, file=self.stderr._out)

        def progress(done, total, stage=None, bar=bar):
            if stage:
                bar.set_description(f"{name}: {stage}")
            if total:
                bar.total = total
                bar.n = done
            bar.refresh()

        return bar, progress

    def _check(self, unit, options, show_progress, *, dry_run):
        bar, progress = self._bar(unit.name, show_progress)
        try:
            report = corpus_check(files=unit.files, options=options, progress=progress)
        except ImportValidationError as exc:
            bar.close()
            for err in exc.errors:
                self.stderr.write(f"  line {err.line}: {err.reason}")
            raise CommandError(f"{unit.name}: cannot be imported; nothing was written") from None
        bar.close()
        self.stdout.write(f"{unit.name}: dry run ({report['format']}, {report['kind']})")
        for line in report_lines(report):
            self.stdout.write(line)
        if dry_run and not report["publishable"]:
            raise CommandError(f"{unit.name}: {report['counts']['refused']} records would be refused, so the import "
                               "would fail; fix them or use --skip-refused")

    def _confirm(self, unit, yes):
        if yes:
            return
        if not sys.stdin.isatty():
            raise CommandError(f"{unit.name}: parsed judgments are published only once you have checked them; "
                               "nothing was written. Check the outcomes above and re-run with --yes")
        answer = input(f"Publish the outcomes of {unit.name} as shown? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            raise CommandError(f"{unit.name}: not confirmed; nothing was written")

    def _import(self, unit, options, show_progress) -> ImportBatch:
        bar, progress = self._bar(unit.name, show_progress)
        batch = corpus_import(files=unit.files, filename=unit.name, options=options, progress=progress)
        bar.close()
        return batch

    def _print_batch(self, unit, batch):
        counts = ", ".join(f"{k} {v}" for k, v in batch.counts.items())
        self.stdout.write(f"{unit.name}: {batch.get_status_display()}{' — ' + counts if counts else ''}")
        if batch.status == ImportBatch.Status.PUBLISHED and batch.report:
            for line in report_lines(batch.report, counts=False):
                self.stdout.write(line)
        if batch.status == ImportBatch.Status.FAILED:
            # The report lists every refused record; batch.errors keeps the first 500.
            for err in (batch.report or {}).get("refused") or batch.errors:
                self.stderr.write(f"  line {err['line']}: {err['reason']}")
            raise CommandError(f"{unit.name}: import failed, nothing from this file was written")
