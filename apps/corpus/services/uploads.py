"""Admin uploads: store the file, queue the import, report progress."""

import uuid

from django.core.cache import cache
from django.core.files.base import ContentFile
from django.db import transaction

from apps.corpus.models import ImportBatch
from apps.corpus.services.importing import corpus_import, import_batch_create


def _progress_key(batch_id: int) -> str:
    return f"corpus-import-progress:{batch_id}"


def import_progress(batch_id: int) -> dict | None:
    return cache.get(_progress_key(batch_id))


@transaction.atomic
def corpus_upload(*, data: bytes, filename: str, user, amendment: bool = False, law_title: str = "") -> ImportBatch:
    from worker.tasks import corpus_import_run

    batch = import_batch_create(data=data, filename=filename, user=user, amendment=amendment, law_title=law_title)
    # A generated name: the uploader's file name never becomes a path.
    suffix = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    batch.upload.save(f"{uuid.uuid4().hex}{suffix}", ContentFile(data), save=True)
    corpus_import_run.delay_on_commit(batch.pk)
    return batch


def corpus_import_run_batch(*, batch_id: int) -> None:
    """The worker's side of an upload. Claims the batch so a redelivered task does nothing."""
    claimed = ImportBatch.objects.filter(pk=batch_id, status=ImportBatch.Status.QUEUED).update(status=ImportBatch.Status.RUNNING)
    if claimed != 1:
        return
    batch = ImportBatch.objects.get(pk=batch_id)
    with batch.upload.open("rb") as fh:
        data = fh.read()

    def progress(done: int, total: int) -> None:
        cache.set(_progress_key(batch_id), {"done": done, "total": total}, timeout=3600)

    corpus_import(data=data, filename=batch.filename, amendment=batch.amendment, law_title=batch.law_title,
                  progress=progress, batch=batch)
