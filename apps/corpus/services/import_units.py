"""What one `import_corpus PATH` imports, unit by unit, and how a report reads as text.

A unit is one ImportBatch: one file, or a folder of single-record files
(judgments; LeCaRD candidate documents) imported all-or-nothing together.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lexlib.parsing.errors import ImportValidationError
from lexlib.parsing.formats import DOCUMENT_SUFFIXES, JSON_SUFFIXES, detect_format, read_json_records
from apps.corpus.services.importing import DIRECTORY_ORDER, directory_files


@dataclass
class Unit:
    name: str
    files: list[tuple[str, bytes]]
    format: str  # "auto" lets the import detect it


def import_units(root: Path, fmt: str = "auto") -> list[Unit]:
    """The imports of a file or a directory, in the order they must run."""
    if root.is_file():
        return [Unit(root.name, [(root.name, root.read_bytes())], fmt)]
    if fmt in ("auto", "lextrace") and any((root / name).is_file() for name in DIRECTORY_ORDER):
        return [Unit(f.name, [(f.name, f.read_bytes())], fmt) for f in directory_files(root)]
    documents = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES)
    records = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in JSON_SUFFIXES)
    if fmt == "auto":
        fmt = _folder_format(documents, records, root)
    if fmt == "judgment":
        if not documents:
            raise ValueError(f"{root}: no judgment documents (.txt, .docx, .pdf) in this folder")
        return [Unit(f"{root.name}/", [(str(p.relative_to(root)), p.read_bytes()) for p in documents], "judgment")]
    if fmt == "statute-txt":
        raise ValueError("a statute text is imported one file at a time: give the file, not a folder")
    if not records:
        raise ValueError(f"{root}: no .json or .jsonl files in this folder")
    if fmt == "cail2018":
        return [Unit(str(p.relative_to(root)), [(p.name, p.read_bytes())], "cail2018") for p in records]
    if fmt == "lecard":
        singles, units = [], []
        for path in records:
            data = path.read_bytes()
            rows, _ = read_json_records(data)
            if len(rows) == 1:  # a candidate document: one per file, imported with its folder
                singles.append((str(path.relative_to(root)), data))
            else:
                units.append(Unit(str(path.relative_to(root)), [(path.name, data)], "lecard"))
        if singles:
            units.append(Unit(f"{root.name}/", singles, "lecard"))
        return units
    raise ValueError(f"{root}: a folder in our own schema must be laid out like ../shared/data ({', '.join(DIRECTORY_ORDER)})")


def _folder_format(documents: list[Path], records: list[Path], root: Path) -> str:
    if documents and records:
        raise ValueError(f"{root}: holds both documents and JSON files; choose the format with --format")
    if documents:
        return "judgment"
    found = set()
    for path in records[:20]:
        try:
            found.add(detect_format(path.name, path.read_bytes()))
        except ImportValidationError as exc:
            raise ValueError(f"{path}: {exc.errors[0].reason}") from None
    if len(found) != 1:
        raise ValueError(f"{root}: the files are of several formats ({', '.join(sorted(found))}); choose one with --format")
    return found.pop()


def report_lines(report: dict, *, counts: bool = True) -> list[str]:
    """A dry-run (or import) report as indented lines: counts, then every amended, merged and refused record."""
    lines = []
    if counts:
        lines.append("  would " + ", ".join(f"{verb} {report['counts'].get(key, 0)}" for key, verb in (
            ("added", "add"), ("amended", "amend"), ("unchanged", "leave unchanged"), ("merged", "merge as duplicates"),
            ("refused", "refuse")) if key in report["counts"]))
    for hint in report.get("hints", []):
        lines.append(f"  note: {hint}")
    for item in report.get("amended", []):
        since = item["supersedes"]["valid_from"] or "before any recorded version"
        lines.append(f"  amended line {item['line']}: {item['id']} from {item['valid_from']}, superseding the version in force since {since}")
        lines.extend(f"      {diff}" for diff in item["diff"].splitlines())
    for item in report.get("merged", []):
        how = (f"near duplicate (shares {item['containment']:.0%} of its shingles)" if item["how"] == "near"
               else {"id": "same id", "exact": "same normalised fact"}[item["how"]])
        differ = "; its charges differ: check it" if item.get("labels_differ") else ""
        lines.append(f"  merged line {item['line']}: {item['id']} into {item['into']} ({how}){differ}")
    for note in report.get("notes", []):
        label = note.get("case_number") or note.get("file") or f"line {note['line']}"
        lines.append(f"  parsed line {note['line']}: {label} {note.get('court', '')}".rstrip())
        for outcome in note.get("outcomes", []):
            lines.append(f"      {outcome['name']}: {'、'.join(outcome['charges'])}; {term_text(outcome)}")
        if note.get("articles"):
            lines.append(f"      articles {', '.join(str(a) for a in note['articles'])}")
    for item in report.get("refused", []):
        first, *rest = item["reason"].splitlines() or [""]
        lines.append(f"  refused line {item['line']}: {first}")
        lines.extend(f"      {more}" for more in rest)
    follow = (report.get("follow_up") or {}).get("search")
    if follow:
        lines.append(f"  search indexes: {follow.get('state')}"
                     + "".join(f"; {target}: {', '.join(f'{k} {v}' for k, v in parts.items())}"
                               for target, parts in follow.items() if isinstance(parts, dict)))
    return lines


def term_text(outcome: dict) -> str:
    """A parsed outcome's sentence in words, as the confirmation shows it."""
    kind = outcome["kind"]
    if outcome["months"] and kind in ("有期徒刑", "拘役", "管制"):
        years, months = divmod(outcome["months"], 12)
        kind += f"{years}年" if years else ""
        kind += f"{months}个月" if months else ""
    parts = [kind]
    if outcome.get("suspended"):
        parts.append("缓刑")
    if outcome.get("fine") is not None:
        parts.append(f"罚金 {outcome['fine']} 元")
    parts.extend(outcome.get("notes", []))
    return "，".join(parts)
