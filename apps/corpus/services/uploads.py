"""Admin uploads: store the file, check it (the dry run), publish it once the admin confirms.

The life of an upload: queued → running (the worker checks it) → checked (the
page shows what would be added, amended, merged and refused, and a judgment's
parsed outcome) → the admin publishes (queued → running → published or
failed) or discards it. A check that finds refused records fails the upload at
once, with every reason, unless the admin chose to publish without them.
"""

import uuid

from django.core.cache import cache
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from apps.audit.services import audit_append
from apps.core.jobs import job_claim, job_finish
from apps.corpus.models import ImportBatch
from lexlib.parsing.errors import ImportValidationError, LineError
from apps.corpus.services.importing import ImportOptions, _finish, corpus_check, corpus_import, import_batch_create


class UploadStateError(ValueError):
    """The upload is not in a state that allows this (e.g. publishing twice)."""


def _progress_key(batch_id: int) -> str:
    return f"corpus-import-progress:{batch_id}"


def import_progress(batch_id: int) -> dict | None:
    return cache.get(_progress_key(batch_id))


def _progress_reporter(batch_id: int):
    state = {"done": 0, "total": 0, "stage": ""}

    def progress(done: int, total: int, stage: str | None = None) -> None:
        if stage:
            state.update(stage=stage, done=0, total=0)
        if total:
            state.update(done=done, total=total)
        cache.set(_progress_key(batch_id), dict(state), timeout=3600)

    return progress


@transaction.atomic
def corpus_upload(*, data: bytes, filename: str, user, amendment: bool = False, law_title: str = "",
                  options: ImportOptions | None = None) -> ImportBatch:
    from worker.tasks import corpus_import_check

    options = options or ImportOptions(amendment=amendment, law_title=law_title)
    batch = import_batch_create(data=data, filename=filename, user=user, options=options)
    # A generated name: the uploader's file name never becomes a path.
    suffix = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    batch.upload.save(f"{uuid.uuid4().hex}{suffix}", ContentFile(data), save=True)
    corpus_import_check.delay_on_commit(batch.pk)
    return batch


def _claim(batch_id: int, *, confirmed: bool) -> ImportBatch | None:
    """Take a queued batch of the given phase; None when another delivery got it first."""
    return job_claim(model=ImportBatch, pk=batch_id, where={"confirmed_at__isnull": not confirmed})


def _upload_files(batch: ImportBatch) -> list[tuple[str, bytes]]:
    with batch.upload.open("rb") as fh:
        return [(batch.filename, fh.read())]


def corpus_check_run_batch(*, batch_id: int) -> None:
    """The worker's dry run of an upload: the report for the admin, or the reasons it cannot be published."""
    batch = _claim(batch_id, confirmed=False)
    if batch is None:
        return
    if ImportBatch.objects.filter(sha256=batch.sha256, status=ImportBatch.Status.PUBLISHED).exclude(pk=batch.pk).exists():
        _finish(batch, ImportBatch.Status.DUPLICATE)
        return
    options = ImportOptions.from_json(batch.options)
    try:
        report = corpus_check(files=_upload_files(batch), options=options, progress=_progress_reporter(batch.pk))
    except ImportValidationError as exc:
        _finish(batch, ImportBatch.Status.FAILED, errors=exc.errors)
        return
    except Exception:
        _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(0, "internal error; see the server log")])
        raise
    batch.report, batch.kind, batch.format = report, report["kind"], report["format"]
    if report["publishable"]:
        # The check ends; the batch waits for the admin (not finished: no finished_at).
        job_finish(model=ImportBatch, pk=batch.pk, status=ImportBatch.Status.CHECKED, report=report,
                   kind=batch.kind, format=batch.format)
    else:
        _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(r["line"], r["reason"]) for r in report["refused"]])


def import_batch_confirm(*, batch: ImportBatch, user) -> ImportBatch:
    """The admin publishes a checked upload (for judgments: confirms the parsed outcomes)."""
    from worker.tasks import corpus_import_run

    with transaction.atomic():
        # Of two admins confirming at once, one queues the publication.
        batch = job_claim(model=ImportBatch, pk=batch.pk, from_status=ImportBatch.Status.CHECKED,
                          to=ImportBatch.Status.QUEUED, confirmed_by=user, confirmed_at=timezone.now())
        if batch is None:
            raise UploadStateError("only a checked import that is waiting for confirmation can be published")
        audit_append(action="corpus.import_confirm", obj=batch, actor=user,
                     after={"kind": batch.kind, "filename": batch.filename, "sha256": batch.sha256})
        corpus_import_run.delay_on_commit(batch.pk)
    return batch


def import_batch_discard(*, batch: ImportBatch, user) -> ImportBatch:
    """The admin drops a checked upload: nothing is written and the stored file is deleted."""
    with transaction.atomic():
        if not job_finish(model=ImportBatch, pk=batch.pk, status=ImportBatch.Status.DISCARDED,
                          from_status=ImportBatch.Status.CHECKED):
            raise UploadStateError("only a checked import that is waiting for confirmation can be discarded")
        batch.refresh_from_db()
        audit_append(action="corpus.import_discard", obj=batch, actor=user,
                     after={"kind": batch.kind, "filename": batch.filename, "sha256": batch.sha256})
    if batch.upload:
        batch.upload.delete(save=True)
    return batch


def corpus_import_run_batch(*, batch_id: int) -> None:
    """The worker's publication of a confirmed upload. Claims the batch so a redelivered task does nothing."""
    batch = _claim(batch_id, confirmed=True)
    if batch is None:
        return
    options = ImportOptions.from_json(batch.options, confirmed=True)
    corpus_import(files=_upload_files(batch), filename=batch.filename, options=options,
                  progress=_progress_reporter(batch.pk), batch=batch)
