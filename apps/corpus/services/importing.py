"""corpus_import: the one way data enters the legal corpus.

Used by `manage.py import_corpus`, the admin upload page (through a Celery
task) and the demo loader. An import is all-or-nothing: it is parsed and
validated completely first, then planned (what is added, amended, merged as a
duplicate, refused) and applied in one transaction; any error rolls
everything back and the ImportBatch keeps the per-line report. `corpus_check`
is the same up to the plan and writes nothing: the dry run.

Formats (lexlib/parsing): our own JSONL/JSON (`lextrace`), CAIL2018 JSON
lines, LeCaRD/LeCaRDv2 records, court judgments and statute texts (TXT, DOCX,
PDF). A file (or, for judgments and LeCaRD candidate files, a folder: one
record per file) is one ImportBatch.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from apps.audit.services import audit_append
from apps.core.caching import generation_bump
from apps.core.dbstats import tables_analyze
from apps.core.jobs import job_claim, job_finish
from apps.corpus.models import Article, ArticleVersion, Charge, ChecklistItem, ImportBatch, Interpretation, Precedent, PrecedentOutcome
from lexlib.parsing.errors import WHOLE_DOCUMENT, ImportValidationError, LineError
from lexlib.parsing.formats import DOCUMENT_SUFFIXES, FORMATS, REPORT_ALL, Converted
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
# The report lists every amended, merged and refused record; added ones up to this many.
REPORT_ADDED = 1000

Progress = Callable[..., None] | None
Files = list[tuple[str, bytes]]


@dataclass
class ImportOptions:
    """What the admin says beside the file(s)."""

    format: str = "auto"  # auto, or one of parsing.formats.FORMATS
    amendment: bool = False  # changed article texts (JSONL with valid_from) are amendments
    law_title: str = ""  # statute texts: the law they belong to
    effective_date: dt.date | None = None  # statute texts: the amendment's date in force
    version_label: str = ""  # statute texts: e.g. 刑法修正案（十一）, kept as each new version's text_source
    source: str = ""  # CAIL2018: the precedents' source label (default cail2018)
    skip_refused: bool = False  # publish the acceptable records and leave the refused ones out
    confirmed: bool = False  # judgments: the admin has checked the parsed outcomes

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["effective_date"] = self.effective_date.isoformat() if self.effective_date else None
        data.pop("confirmed")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], **overrides) -> ImportOptions:
        known = {k: v for k, v in (data or {}).items() if k in cls.__dataclass_fields__}
        if known.get("effective_date"):
            known["effective_date"] = dt.date.fromisoformat(known["effective_date"])
        return cls(**{**known, **overrides})


@dataclass
class Parsed:
    """A file read and validated: the valid records, and every refused one with its reason."""

    format: str
    kind: str
    records: Any  # [(line, record)], or the mapping of a charge table
    refused: list[LineError] = field(default_factory=list)
    notes: dict[int, dict[str, Any]] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)


# --- reading ---------------------------------------------------------------------------------


def _load_json_document(data: bytes) -> dict:
    """A whole-file JSON object (charge tables), with the same strictness as JSONL."""
    from lexlib.parsing.jsonl import read_jsonl

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


def parse_upload(data: bytes, filename: str, *, law_title: str = "", options: ImportOptions | None = None) -> tuple[str, object]:
    """Parse and validate one file completely (kind, records); ImportValidationError for any refusal."""
    options = options or ImportOptions(law_title=law_title)
    parsed = parse_files([(filename, data)], options=options)
    if parsed.refused:
        raise ImportValidationError(parsed.refused)
    return parsed.kind, parsed.records


def parse_files(files: Files, *, options: ImportOptions, progress: Progress = None) -> Parsed:
    """Read, convert and validate; whole-file problems raise ImportValidationError, record-level
    ones are returned as refusals (the plan and the admin decide what happens to them)."""
    from lexlib.parsing.formats import detect_format

    if not files:
        raise ImportValidationError([LineError(WHOLE_DOCUMENT, "nothing to import: no file")])
    fmt = options.format if options.format not in ("", "auto") else None
    if fmt is not None and fmt not in FORMATS:
        raise ImportValidationError([LineError(WHOLE_DOCUMENT, f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")])
    if fmt is None:
        found = {detect_format(name, data) for name, data in files}
        if len(found) > 1:
            raise ImportValidationError([LineError(WHOLE_DOCUMENT, f"the files are of different formats ({', '.join(sorted(found))}); "
                                                                   "import them separately or choose the format")])
        fmt = found.pop()
    if fmt == "lextrace" and len(files) == 1 and Path(files[0][0]).suffix.lower() in DOCUMENT_SUFFIXES:
        fmt = "statute-txt"  # a statute document uploaded without a format, as before formats existed
    if fmt == "lextrace":
        if len(files) != 1:
            raise ImportValidationError([LineError(WHOLE_DOCUMENT, "files in our own schema are imported one file per import")])
        return _parse_lextrace(*files[0])
    if fmt == "statute-txt":
        if len(files) != 1:
            raise ImportValidationError([LineError(WHOLE_DOCUMENT, "a statute text is imported one file per import")])
        return _parse_statute_text(*files[0], options=options)
    converted = _convert(fmt, files, options, progress)
    return _validated(fmt, converted)


def _parse_lextrace(filename: str, data: bytes) -> Parsed:
    from lexlib.parsing.jsonl import read_jsonl_partial
    from lexlib.parsing.records import detect_kind, validate_records_partial

    suffix = Path(filename).suffix.lower()
    if suffix == ".json":
        return Parsed("lextrace", "charges", _load_json_document(data))
    if suffix != ".jsonl":
        raise ImportValidationError([LineError(0, f"unsupported file type {suffix or '(none)'}: use .jsonl, .json, .txt, .docx or .pdf")])
    rows, errors = read_jsonl_partial(data, error_limit=REPORT_ALL)
    if not rows and not errors:
        raise ImportValidationError([LineError(0, "the file holds no records")])
    kinds: dict[str, int] = {}
    for line, row in rows:
        try:
            kinds.setdefault(detect_kind(row), line)
        except ValueError as exc:
            errors.add(line, str(exc))
    if len(kinds) > 1:
        raise ImportValidationError(
            [LineError(line, f"first {kind} record; one file must hold one kind of record") for kind, line in kinds.items()]
        )
    if not kinds:
        raise ImportValidationError(errors.errors)
    kind = next(iter(kinds))
    bad = {e.line for e in errors.errors}
    # Well-formed lines beside broken ones are validated too: one report shows every problem.
    records, invalid = validate_records_partial(kind, [(line, row) for line, row in rows if line not in bad], error_limit=REPORT_ALL)
    return Parsed("lextrace", kind, records, refused=sorted(errors.errors + invalid.errors, key=lambda e: e.line))


def _parse_statute_text(filename: str, data: bytes, *, options: ImportOptions) -> Parsed:
    import re

    from lexlib.parsing.documents import extract_text
    from lexlib.parsing.records import validate_records_partial
    from lexlib.parsing.statute_text import find_effective_date, statute_rows

    if not options.law_title.strip():
        raise ImportValidationError([LineError(0, "a plain-text statute needs the law's title")])
    text = extract_text(data, filename).text
    hints = []
    stated = find_effective_date(text)
    if stated and options.effective_date is None:
        hints.append(f"the text says it takes effect on {stated.isoformat()}; give that as the effective date if "
                     "this text amends the stored one")
    rows = []
    for line, article in statute_rows(text):
        row = {**article, "law": options.law_title.strip()}
        if re.fullmatch(r"[（(]删去[）)]", article["text"].strip()):
            row["repealed"] = True
        if options.effective_date:
            row["valid_from"] = options.effective_date.isoformat()
            row["amendment"] = True
        if options.version_label.strip():
            row["text_source"] = options.version_label.strip()[:200]
        rows.append((line, row))
    records, invalid = validate_records_partial("statute", rows, error_limit=REPORT_ALL)
    return Parsed("statute-txt", "statute", records, refused=invalid.errors, hints=hints)


def _convert(fmt: str, files: Files, options: ImportOptions, progress: Progress = None) -> Converted:
    if fmt == "cail2018":
        from lexlib.parsing.cail import cail_convert

        return _concatenated([cail_convert(data, filename=name, source=options.source.strip() or "cail2018")
                              for name, data in files], [name for name, _ in files])
    if fmt == "lecard":
        from lexlib.parsing.lecard import lecard_convert

        known = list(Charge.objects.values_list("name", flat=True))
        parts, offset = [], 0
        for name, data in files:
            part = lecard_convert(data, filename=name if len(files) > 1 else "", known_charges=known, line_offset=offset)
            offset = max([offset, *(line for line, _ in part.rows), *(e.line for e in part.errors)])
            parts.append(part)
        return _concatenated(parts, None)
    if fmt == "judgment":
        from lexlib.parsing.documents import extract_text
        from lexlib.parsing.errors import DocumentError
        from lexlib.parsing.judgment import judgment_convert

        documents, unreadable = [], {}
        for position, (name, data) in enumerate(files, 1):
            try:
                documents.append((name, extract_text(data, name).text))
            except DocumentError as exc:
                documents.append((name, ""))
                unreadable[position] = f"{name}: {exc}"
            if progress is not None:
                progress(position, len(files))  # each DOCX/PDF is extracted in its own limited child
        converted = judgment_convert(documents)
        converted.errors = [LineError(e.line, unreadable.get(e.line, e.reason)) for e in converted.errors]
        return converted
    raise ImportValidationError([LineError(WHOLE_DOCUMENT, f"unknown format {fmt!r}")])


def _concatenated(parts: list[Converted], names: list[str] | None) -> Converted:
    """One conversion of several files; with ``names``, line numbers are renumbered file after file
    and every reason names its file."""
    if len(parts) == 1:
        return parts[0]
    merged = Converted(kind=parts[0].kind)
    offset = 0
    for index, part in enumerate(parts):
        shift = offset if names else 0
        prefix = f"{names[index]}: " if names else ""
        merged.rows += [(line + shift, row) for line, row in part.rows]
        merged.errors += [LineError(e.line + shift, prefix + e.reason) for e in part.errors]
        merged.notes.update({line + shift: note for line, note in part.notes.items()})
        merged.hints += part.hints
        offset += max([0, *(line for line, _ in part.rows), *(e.line for e in part.errors)])
    return merged


def _validated(fmt: str, converted: Converted) -> Parsed:
    from lexlib.parsing.records import validate_records_partial

    records, invalid = validate_records_partial(converted.kind, converted.rows, error_limit=REPORT_ALL)
    if not records and not converted.errors and not invalid:
        raise ImportValidationError([LineError(0, "the file holds no records")])
    refused = sorted(converted.errors + invalid.errors, key=lambda e: e.line)
    return Parsed(fmt, converted.kind, records, refused=refused, notes=converted.notes, hints=converted.hints)


# --- planning and the dry run ---------------------------------------------------------------------


def corpus_plan(parsed: Parsed, options: ImportOptions):
    """The plan of a case or statute import (None for the other kinds: their appliers decide)."""
    from apps.corpus.services.planning import cases_plan, statutes_plan

    if parsed.kind == "case":
        return cases_plan(parsed.records)
    if parsed.kind == "statute":
        return statutes_plan(parsed.records, amendment=options.amendment)
    return None


class _Rollback(Exception):
    pass


def _trial_counts(parsed: Parsed, options: ImportOptions) -> tuple[dict, list[LineError]]:
    """Counts of a kind without a plan (interpretations, checklists, charge tables): applied inside a
    savepoint that is always rolled back, so the dry run writes nothing."""
    outcome: dict[str, Any] = {}
    try:
        with transaction.atomic():
            try:
                outcome["counts"] = APPLIERS[parsed.kind](parsed.records, batch=None, amendment=options.amendment)
            except ImportValidationError as exc:
                outcome["errors"] = exc.errors
            raise _Rollback
    except _Rollback:
        pass
    return outcome.get("counts", {}), outcome.get("errors", [])


def corpus_check(*, files: Files, options: ImportOptions, progress: Progress = None) -> dict[str, Any]:
    """The dry run: what an import of ``files`` would do, record by record; nothing is written."""
    _stage(progress, "reading")
    parsed = parse_files(files, options=options, progress=progress)
    _stage(progress, "checking against the corpus")
    with transaction.atomic():
        from apps.corpus.services.planning import import_lock

        import_lock()
        plan = corpus_plan(parsed, options)
        trial = _trial_counts(parsed, options) if plan is None else None
    return import_report(parsed, plan, trial=trial, options=options)


def _stage(progress: Progress, stage: str) -> None:
    if progress is not None:
        progress(0, 0, stage=stage)


def import_report(parsed: Parsed, plan, *, trial=None, options: ImportOptions) -> dict[str, Any]:
    """What would be (or was) added, amended, unchanged, merged and refused, as JSON."""
    from apps.corpus.services.planning import CasePlan, StatutePlan

    refused = sorted(parsed.refused + (plan.refused if plan is not None else []) + (trial[1] if trial else []),
                     key=lambda e: e.line)
    report: dict[str, Any] = {"format": parsed.format, "kind": parsed.kind, "hints": parsed.hints,
                              "refused": [{"line": e.line, "reason": e.reason} for e in refused]}
    if isinstance(plan, CasePlan):
        added = plan.of("add")
        report["counts"] = {"added": len(added), "unchanged": len(plan.of("unchanged")), "merged": len(plan.of("merge")),
                            "refused": len(refused)}
        report["added"] = [{"line": a.line, "id": a.record.id, "charges": list(a.record.charges)} for a in added[:REPORT_ADDED]]
        report["merged"] = [{"line": a.line, "id": a.record.id, "into": a.target, "how": a.how,
                             "containment": a.containment, "labels_differ": a.labels_differ,
                             "charges": list(a.record.charges)} for a in plan.of("merge")]
    elif isinstance(plan, StatutePlan):
        added = plan.of("add")
        report["counts"] = {"added": len(added), "amended": len(plan.of("amend")), "unchanged": len(plan.of("unchanged")),
                            "refused": len(refused)}
        report["added"] = [{"line": a.line, "id": a.record.label, "valid_from": _iso(a.record.valid_from)}
                           for a in added[:REPORT_ADDED]]
        report["amended"] = [{"line": a.line, "id": a.record.label, "valid_from": _iso(a.record.valid_from),
                              "supersedes": {"valid_from": _iso(a.previous.valid_from), "batch": a.previous.batch_id},
                              "diff": a.diff} for a in plan.of("amend")]
    else:
        counts = dict(trial[0]) if trial else {}
        counts["refused"] = len(refused)
        report["counts"] = counts
    report["truncated_added"] = max(0, report["counts"].get("added", 0) - len(report.get("added", [])))
    report["notes"] = [{"line": line, **note} for line, note in sorted(parsed.notes.items())
                       if line not in {e.line for e in refused}]
    report["needs_confirmation"] = parsed.format == "judgment"
    report["publishable"] = not refused or options.skip_refused
    return report


def _iso(day: dt.date | None) -> str | None:
    return day.isoformat() if day else None


# --- importing -------------------------------------------------------------------------------------


def files_digest(files: Files) -> tuple[str, int]:
    """SHA-256 and size of an import: of the file itself, or of a folder's (name, hash) list."""
    if len(files) == 1:
        return hashlib.sha256(files[0][1]).hexdigest(), len(files[0][1])
    manifest = "".join(f"{name}\0{hashlib.sha256(data).hexdigest()}\n" for name, data in sorted(files))
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest(), sum(len(data) for _, data in files)


def import_batch_create(*, data: bytes | None = None, filename: str, user=None, amendment: bool = False, law_title: str = "",
                        files: Files | None = None, options: ImportOptions | None = None) -> ImportBatch:
    files = files if files is not None else [(filename, data or b"")]
    sha, size = files_digest(files)
    options = options or ImportOptions(amendment=amendment, law_title=law_title)
    return ImportBatch.objects.create(
        filename=Path(filename).name[:255] + ("/" if len(files) > 1 else ""),
        sha256=sha,
        size_bytes=size,
        amendment=options.amendment,
        law_title=options.law_title,
        format="" if options.format in ("", "auto") else options.format,
        options=options.as_json(),
        created_by=user if user is not None and user.is_authenticated else None,
    )


# Bulk-loaded by the appliers; analyzed before the graph follow-up queries them.
CORPUS_MODELS = (Article, ArticleVersion, Charge, ChecklistItem, Interpretation, Precedent, PrecedentOutcome)


def corpus_import(*, data: bytes | None = None, filename: str, user=None, amendment: bool = False, law_title: str = "",
                  progress: Progress = None, batch: ImportBatch | None = None, files: Files | None = None,
                  options: ImportOptions | None = None) -> ImportBatch:
    """Import one file (or one folder of single-record files). Returns its ImportBatch: published,
    duplicate or failed (with errors and, when it got that far, the plan's report)."""
    files = files if files is not None else [(filename, data or b"")]
    options = options or ImportOptions(amendment=amendment, law_title=law_title)
    if batch is None:
        batch = import_batch_create(filename=filename, user=user, files=files, options=options)
    if batch.status != ImportBatch.Status.RUNNING:  # an upload's publication is claimed by the worker already
        if job_claim(model=ImportBatch, pk=batch.pk) is None:
            raise ValueError(f"import batch {batch.pk} is not waiting to be imported")
        batch.refresh_from_db()
    size = sum(len(d) for _, d in files)
    if size > MAX_UPLOAD_BYTES:
        return _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(0, f"file too large: {size} bytes (limit {MAX_UPLOAD_BYTES})")])
    if ImportBatch.objects.filter(sha256=batch.sha256, status=ImportBatch.Status.PUBLISHED).exclude(pk=batch.pk).exists():
        return _finish(batch, ImportBatch.Status.DUPLICATE)
    try:
        _stage(progress, "reading")
        parsed = parse_files(files, options=options, progress=progress)
        batch.kind, batch.format = parsed.kind, parsed.format
        if parsed.format == "judgment" and not options.confirmed:
            raise ImportValidationError([LineError(0, "parsed judgments are published only after an admin has confirmed "
                                                      "their outcomes (the dry run shows them)")])
        with transaction.atomic():
            from apps.corpus.services.planning import import_lock

            import_lock()
            _stage(progress, "checking against the corpus")
            plan = corpus_plan(parsed, options)
            batch.report = import_report(parsed, plan, options=options)
            refused = sorted(parsed.refused + (plan.refused if plan is not None else []), key=lambda e: e.line)
            if refused and not options.skip_refused:
                raise ImportValidationError(refused)
            _stage(progress, "writing")
            counts = _apply(parsed, plan, batch=batch, options=options, progress=progress)
            if refused:
                counts["refused"] = len(refused)
            tables_analyze(*CORPUS_MODELS)
            # The graph projection follows in the same transaction: both or neither.
            from apps.graph.services.following import graph_follow_import

            _stage(progress, "updating the graph")
            graph_follow_import(kind=parsed.kind, batch=batch)
            # Labels, texts and counts the pages derived from the corpus are derived again (apps/core/caching.py).
            generation_bump()
            # The audit event commits with the publication or not at all (INV-5); last, to hold its lock briefly.
            audit_append(action="corpus.import", obj=batch, actor=user or batch.created_by,
                         after={"kind": parsed.kind, "filename": batch.filename, "sha256": batch.sha256, "counts": counts})
            batch = _finish(batch, ImportBatch.Status.PUBLISHED, counts=counts)
    except ImportValidationError as exc:
        return _finish(batch, ImportBatch.Status.FAILED, errors=exc.errors)
    except IntegrityError as exc:
        # The database's own constraints are the backstop of the checks above.
        return _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(0, f"rejected by the database: {exc.__cause__ or exc}")])
    except Exception:
        _finish(batch, ImportBatch.Status.FAILED, errors=[LineError(0, "internal error; see the server log")])
        raise
    _follow_up(batch, parsed.kind, progress)
    return batch


def _apply(parsed: Parsed, plan, *, batch: ImportBatch, options: ImportOptions, progress: Progress) -> dict:
    if parsed.kind == "case":
        return appliers.apply_case_plan(plan, batch=batch, progress=progress)
    if parsed.kind == "statute":
        return appliers.apply_statute_plan(plan, batch=batch, progress=progress)
    return APPLIERS[parsed.kind](parsed.records, batch=batch, amendment=options.amendment, progress=progress)


def _follow_up(batch: ImportBatch, kind: str, progress: Progress) -> None:
    """After the commit: bring the search indexes up to date. A failure leaves the import published
    and the index visibly behind (corpus freshness on /corpus/imports/ and /models/)."""
    from apps.corpus.services.indexing import search_indexes_follow

    _stage(progress, "updating the search indexes")
    try:
        result = search_indexes_follow(kind=kind)
    except Exception as exc:  # noqa: BLE001 - the import is committed; say what is behind instead of failing it
        log.exception("search index follow-up after import %s failed", batch.pk)
        result = {"state": "failed", "detail": f"{type(exc).__name__}: {exc}"[:500]}
    batch.report = {**batch.report, "follow_up": {"search": result}}
    batch.save(update_fields=["report"])


def _finish(batch: ImportBatch, status: str, *, counts: dict | None = None, errors: list[LineError] | None = None) -> ImportBatch:
    batch.status = status
    batch.counts = counts or {}
    batch.errors = [{"line": e.line, "reason": e.reason} for e in (errors or [])][:500]
    batch.finished_at = timezone.now()
    outcome = {f: getattr(batch, f) for f in ("kind", "format", "counts", "errors", "report", "finished_at")}
    try:
        with transaction.atomic():
            ended = job_finish(model=ImportBatch, pk=batch.pk, status=status, **outcome)
            if ended and status != ImportBatch.Status.PUBLISHED:  # a publication is audited with its data, above
                audit_append(action=f"corpus.import_{status}", obj=batch, actor=batch.created_by,
                             after={"kind": batch.kind, "filename": batch.filename, "sha256": batch.sha256,
                                    "errors": len(batch.errors)})
    except DatabaseError:
        # The trail cannot be written: still end the batch (never left 'running'), and say so loudly.
        log.exception("corpus import %s: its %s outcome could not be audited", batch.pk, status)
        job_finish(model=ImportBatch, pk=batch.pk, status=status, **outcome)
        raise
    log.info("corpus import %s: %s %s", batch.filename, status, json.dumps(batch.counts, ensure_ascii=False))
    return batch


def directory_files(path: Path) -> list[Path]:
    """The importable files of a corpus directory, in dependency order."""
    found = [path / name for name in DIRECTORY_ORDER if (path / name).is_file()]
    if not found:
        raise FileNotFoundError(f"{path} holds none of: {', '.join(DIRECTORY_ORDER)}")
    return found
