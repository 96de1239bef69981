from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.corpus.models import ImportBatch
from apps.corpus.services.importing import corpus_import, directory_files


class Command(BaseCommand):
    help = (
        "Import corpus files (statutes, interpretations, checklists, charge tables, precedent cases). "
        "PATH is a file or a directory laid out like ../shared/data. Each file is all-or-nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--amendment", action="store_true", help="changed article texts are amendments (new versions)")
        parser.add_argument("--law", default="", help="the law's title, for a plain-text/DOCX/PDF statute")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, path, amendment, law, no_progress, **options):
        root = Path(path)
        if root.is_dir():
            files = directory_files(root)
        elif root.is_file():
            files = [root]
        else:
            raise CommandError(f"{root}: no such file or directory")
        for file in files:
            bar = tqdm(desc=file.name, unit="rec", disable=no_progress or not self.stdout.isatty(), leave=False)

            def progress(done, total, bar=bar):
                bar.total = total
                bar.n = done
                bar.refresh()

            batch = corpus_import(data=file.read_bytes(), filename=file.name, amendment=amendment, law_title=law, progress=progress)
            bar.close()
            counts = ", ".join(f"{k} {v}" for k, v in batch.counts.items())
            self.stdout.write(f"{file.name}: {batch.get_status_display()}{' — ' + counts if counts else ''}")
            if batch.status == ImportBatch.Status.FAILED:
                for err in batch.errors[:50]:
                    self.stderr.write(f"  line {err['line']}: {err['reason']}")
                if len(batch.errors) > 50:
                    self.stderr.write(f"  … and {len(batch.errors) - 50} more")
                raise CommandError(f"{file.name}: import failed, nothing from this file was written")
