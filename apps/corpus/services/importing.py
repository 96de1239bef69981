"""corpus_import: the one way data enters the legal corpus.

Used by `manage.py import_corpus`, the admin upload page (through a Celery
task) and the demo loader. An import is all-or-nothing: it is parsed and
validated completely first, then applied in one transaction; any error rolls
everything back and the ImportBatch keeps the per-line report.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from apps.audit.services import audit_append
from apps.core.dbstats import tables_analyze
from apps.corpus.models import Article, ArticleVersion, Charge, ChecklistItem, ImportBatch, Interpretation, Precedent, PrecedentOutcome
from apps.corpus.parsing.errors import ImportValidationError, LineError
from apps.corpus.services import appliers

log = logging.getLogger(__name__)

MAX_UPLOAD_BYTES = 200 * 1024 * 1024
# Dependency order for a directory import: articles before what links to them.
DIRECTORY_ORDER = [
    "statutes.jsonl",
    "interpretations.jsonl",
    "checklists.jsonl",
    "charge_categories.json",
    "charge_aliases.json",
    "charges.json",
    "cases.jsonl",
]
APPLIERS = {
    "statute": appliers.apply_statutes,
    "interpretation": appliers.apply_interpretations,
    "checklist": appliers.apply_checklists,
    "case": appliers.apply_cases,
    "charges": appliers.apply_charge_table,
}

Progress = Callable[[int, int], None] | None


def _load_json_document(data: bytes) -> dict:
    """A whole-file JSON object (charge tables), with the same strictness as JSONL."""
    from apps.corpus.parsing.jsonl import read_jsonl

    # One logical line: reuse the JSONL reader's checks (UTF-8, duplicates, NaN…).
    rows = read_jsonl(b" ".join(data.splitlines()))
    if len(rows) != 1:
        raise ImportValidationError([LineError(1, "expected one JSON object")])
    obj = rows[0][1]
    for key, value in obj.items():
        if key in ("categories", "aliases"):
            continue
        if not (isinstance(value, list) and all(isinstance(x, str) for x in value)) and not (value is None or isinstance(value, str)):
            raise ImportValidationError([LineError(1, f"{key!r}: expected a list of charge names or one charge name")])
    return obj


def parse_upload(data: bytes, filename: str, *, law_title: str = "") -> tuple[str, object]:
    """Parse and validate an upload completely, before anything is written."""
    from apps.corpus.parsing.jsonl import read_jsonl
    from apps.corpus.parsing.records import detect_kind, validate_records

    suffix = Path(filename).suffix.lower()
    if suffix == ".jsonl":
        rows = read_jsonl(data)
        if not rows:
            raise ImportValidationError([LineError(0, "the file holds no records")])
        kinds = {}
        errors = []
        for line, row in rows:
            try:
                kinds.setdefault(detect_kind(row), line)
            except (ValueError, ImportValidationError) as exc:
                errors.append(LineError(line, str(exc)))
        if errors:
            raise ImportValidationError(errors)
        if len(kinds) > 1:
            raise ImportValidationError(
                [LineError(line, f"first {kind} record; one file must hold one kind of record") for kind, line in kinds.items()]
            )
        kind = next(iter(kinds))
        records = validate_records(kind, rows)
        return kind, list(zip([line for line, _ in rows], records))
    if suffix == ".json":
        return "charges", _load_json_document(data)
    if suffix in (".txt", ".docx", ".pdf"):
        from apps.corpus.parsing.documents import extract_text
        from apps.corpus.parsing.records import validate_records
        from apps.corpus.parsing.statute_text import statute_rows

        if not law_title.strip():
            raise ImportValidationError([LineError(0, "a plain-text statute needs the law's title")])
        text = extract_text(data, filename).text
        rows = [(line, {**a, "law": law_title.strip()}) for line, a in statute_rows(text)]
        return "statute", list(zip([line for line, _ in rows], validate_records("statute", rows)))
    raise ImportValidationError([LineError(0, f"unsupported file type {suffix or '(none)'}: use .jsonl, .json, .txt, .docx or .pdf")])


def import_batch_create(*, data: bytes, filename: str, user=None, amendment: bool = False, law_title: str = "") -> ImportBatch:
    return ImportBatch.objects.create(
        filename=Path(filename).name[:255],
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        amendment=amendment,
        law_title=law_title,
        created_by=user if user is not None and user.is_authenticated else None,
    )


# Bulk-loaded by the appliers; analyzed before the graph follow-up queries them.
CORPUS_MODELS = (Article, ArticleVersion, Charge, ChecklistItem, Interpretation, Precedent, PrecedentOutcome)


def corpus_import(*, data: bytes, filename: str, user=None, amendment: bool = False, law_title: str = "",
                  progress: Progress = None, batch: ImportBatch | None = None) -> ImportBatch:
    """Import one file. Returns its ImportBatch: published, duplicate or failed (with errors)."""
    if batch is None:
        batch = import_batch_create(data=data, filename=filename, user=user, amendment=amendment, law_title=law_title)
    batch.status = ImportBatch.Status.RUNNING
    batch.save(update_fields=["status"])
    if len(data) > MAX_UPLOAD_BYTES:
        return _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(0, f"file too large: {len(data)} bytes (limit {MAX_UPLOAD_BYTES})")])
    if ImportBatch.objects.filter(sha256=batch.sha256, status=ImportBatch.Status.PUBLISHED).exclude(pk=batch.pk).exists():
        return _finish(batch, ImportBatch.Status.DUPLICATE)
    try:
        kind, records = parse_upload(data, filename, law_title=law_title)
        batch.kind = kind
        with transaction.atomic():
            counts = APPLIERS[kind](records, batch=batch, amendment=amendment, progress=progress)
            tables_analyze(*CORPUS_MODELS)
            # The graph projection follows in the same transaction: both or neither.
            from apps.graph.services.following import graph_follow_import

            graph_follow_import(kind=kind, batch=batch)
            # The audit event commits with the publication or not at all (INV-5); last, to hold its lock briefly.
            audit_append(action="corpus.import", obj=batch, actor=user or batch.created_by,
                         after={"kind": kind, "filename": batch.filename, "sha256": batch.sha256, "counts": counts})
            return _finish(batch, ImportBatch.Status.PUBLISHED, counts=counts)
    except ImportValidationError as exc:
        return _finish(batch, ImportBatch.Status.FAILED, errors=exc.errors)
    except IntegrityError as exc:
        # The database's own constraints are the backstop of the checks above.
        return _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(0, f"rejected by the database: {exc.__cause__ or exc}")])
    except Exception:
        _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(0, "internal error; see the server log")])
        raise


def _finish(batch: ImportBatch, status: str, *, counts: dict | None = None, errors: list[LineError] | None = None) -> ImportBatch:
    batch.status = status
    batch.counts = counts or {}
    batch.errors = [{"line": e.line, "reason": e.reason} for e in (errors or [])][:500]
    batch.finished_at = timezone.now()
    fields = ["status", "kind", "counts", "errors", "finished_at"]
    try:
        with transaction.atomic():
            batch.save(update_fields=fields)
            if status != ImportBatch.Status.PUBLISHED:  # a publication is audited with its data, above
                audit_append(action=f"corpus.import_{status}", obj=batch, actor=batch.created_by,
                             after={"kind": batch.kind, "filename": batch.filename, "sha256": batch.sha256,
                                    "errors": len(batch.errors)})
    except DatabaseError:
        # The trail cannot be written: still end the batch (never left 'running'), and say so loudly.
        log.exception("corpus import %s: its %s outcome could not be audited", batch.pk, status)
        batch.save(update_fields=fields)
        raise
    log.info("corpus import %s: %s %s", batch.filename, status, json.dumps(batch.counts, ensure_ascii=False))
    return batch


def directory_files(path: Path) -> list[Path]:
    """The importable files of a corpus directory, in dependency order."""
    found = [path / name for name in DIRECTORY_ORDER if (path / name).is_file()]
    if not found:
        raise FileNotFoundError(f"{path} holds none of: {', '.join(DIRECTORY_ORDER)}")
    return found
