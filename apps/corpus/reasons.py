"""Why a record was refused or a file rejected, in the language of the page that shows it.

The parsers (lexlib/parsing) and the import services write every reason in English: that is the form
kept in an ImportBatch's report and errors, written to the logs and printed by `manage.py import_corpus`,
and lexlib knows nothing of Django. This module translates a stored reason only when a page shows it.

Each row of REASONS is one English reason exactly as the code writes it, with %(name)s where the code
puts a value. The row is both the msgid of its translation and, turned into a regular expression whose
named groups capture the values, the way to recognise it; the translated sentence is then filled with
the same values (line numbers, ids, field names, quoted input). The templates are marked with gettext_noop
(makemessages keeps them) and translated with gettext when the page is rendered. Some values are English phrases
themselves (a JSON type, what kind of file it really is, the reason inside "unparseable: …"): those
groups are translated in turn, by TERMS and REASONS.

A reason may start with the name of the file it came from ("a.txt: …") and may go on over several lines
(a text diff): the prefix is kept and the following lines are shown unchanged. A reason no row knows is
shown as it is, in English, never dropped.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext, gettext_noop

from apps.core.templated import Row, fill, first_match, rows_of

# A file name (or a field such as "pjjg" of a LeCaRD record) before the reason it qualifies.
PREFIXED = gettext_noop("%(prefix)s: %(reason)s")

# The JSON types the record validator names (lexlib/parsing/records.py): what a field must be, and what it was.
_WANTED = ("a non-empty string", "a string", "an integer", "true or false", "a list", "an object")
_GOT = ("null", "a boolean", "an integer", "a number", "a string", "a list", "an object")

_NUMBER = r"-?\d+"
_DATE = r"\d{4}-\d{2}-\d{2}"
# What a placeholder may stand for, by its name; any other placeholder takes any text (as little as fits).
_GROUPS = {
    "field": r"[\w.\[\]]+",  # a field path such as per_defendant[0].term.months
    "number_field": r"\w+",
    **dict.fromkeys(("line", "column", "byte", "count", "limit", "needed", "digits", "size", "status", "ratio",
                     "days", "months", "minimum", "maximum", "number", "sub"), _NUMBER),
    "seconds": r"[\d.e+-]+",
    "date": _DATE,
    "valid_from": f"{_DATE}|…",
    "valid_to": f"{_DATE}|…",
    "label": r"第[^\s:：]+",  # an article label (第二百六十六条之一)
    "name": r"[^\s:：]+",  # a defendant, as the judgment parser reads one
    "names": r"[^\s:：]+",
    "kind": r"TXT|DOCX|PDF",
    "constant": r"-?(?:NaN|Infinity)",
    "signal": r"SIG\w+|signal -?\d+",
    "first": r"\S+",
    "second": r"\S+",
    "wanted": "|".join(map(re.escape, _WANTED)),
    "got": "|".join(map(re.escape, _GOT)),
}
# Placeholders whose value is itself an English phrase or reason, translated in turn.
TRANSLATED_PLACEHOLDERS = frozenset({"wanted", "got", "what", "why", "json_error", "reason", "suffix"})


def _rows(*templates: str) -> tuple[Row, ...]:
    return rows_of(*templates, groups=_GROUPS)


# Whole reasons. The first row that matches a reason wins, so a reason that a more general row would
# also match comes before that row.
REASONS = _rows(
    # lexlib/parsing/records.py: "<field>: <problem>" for each invalid field of a record
    gettext_noop("%(field)s: unknown field (CAIL2018 records have fact and meta)"),
    gettext_noop("%(field)s: unknown field"),
    gettext_noop("%(field)s: required field is missing"),
    gettext_noop("%(field)s: must not be null"),
    gettext_noop("%(field)s: must not be empty"),
    gettext_noop("record: must be an object, got %(got)s"),
    gettext_noop("%(field)s: must be at least %(minimum)s, got %(value)s"),
    gettext_noop("%(field)s: must be at most %(maximum)s, got %(value)s"),
    gettext_noop("%(field)s: must be %(wanted)s, got %(got)s"),
    gettext_noop("%(field)s: must end in %(suffix)s, got %(value)s"),
    gettext_noop("%(field)s: must be a date written YYYY-MM-DD, got %(value)s"),
    gettext_noop("%(field)s: is not a real date: %(value)s"),
    gettext_noop("%(field)s: %(value)s does not match %(number_field)s %(number)s and sub %(sub)s "
                 "(expected %(expected)s)"),
    gettext_noop("%(field)s: %(value)s does not match %(number_field)s %(number)s and sub %(sub)s"),
    gettext_noop("%(field)s: %(value)s is not an article label such as 第二百六十六条"),
    gettext_noop("%(field)s: unknown law %(value)s"),
    gettext_noop("%(field)s: %(valid_to)s is before valid_from %(valid_from)s"),
    gettext_noop("%(field)s: unknown sentence kind %(value)s"),
    gettext_noop("%(field)s: life and death cannot both be true"),
    gettext_noop("%(field)s: unknown value %(value)s (expected one of %(allowed)s)"),
    gettext_noop("%(field)s: duplicate of line %(line)s"),
    gettext_noop("a record must be a JSON object"),
    gettext_noop("cannot tell the record kind: expected `fact` (case), `items` + `article` (checklist), "
                 "`number` + `text` (statute) or `id` + `text` + `articles` (interpretation)"),
    # lexlib/parsing/cail.py
    gettext_noop("record: must be a JSON object"),
    gettext_noop("%(field)s: required, a non-empty string"),
    gettext_noop("%(field)s: only %(count)s characters once punctuation is removed; at least %(needed)s are needed "
                 "for a precedent"),
    gettext_noop("%(field)s: required, an object"),
    gettext_noop("%(field)s: required, a non-empty list of charge names"),
    gettext_noop("%(field)s: must be a charge name, got %(value)s"),
    gettext_noop("%(field)s: must be a list of article numbers"),
    gettext_noop("%(field)s: must be an article number, got %(value)s"),
    gettext_noop("%(field)s: must be a list of names"),
    gettext_noop("%(field)s: must be a whole number of yuan, got %(value)s"),
    gettext_noop("%(field)s: must be an object"),
    gettext_noop("%(field)s: must be a number of months (0 or more), got %(value)s"),
    gettext_noop("%(field)s: must be true or false, got %(value)s"),
    gettext_noop("%(field)s: life_imprisonment and death_penalty cannot both be true"),
    # lexlib/parsing/lecard.py
    gettext_noop("not a LeCaRD record: expected ridx+q (query), ajjbqk (candidate), id+query (LeCaRDv2 query) "
                 "or pid+qw (LeCaRDv2 candidate)"),
    gettext_noop("the query does not start with a judgment title (…刑事判决书)"),
    gettext_noop("no known charge at the end of the title %(title)s"),
    gettext_noop("no verdict: neither pjjg nor a 判决如下 section in qw"),
    gettext_noop("the facts have only %(count)s characters once punctuation is removed; at least %(needed)s are "
                 "needed for a precedent"),
    gettext_noop("no charge: the record gives none and none could be read"),
    gettext_noop("%(field)s: required, a string or number identifying the record"),
    gettext_noop("%(field)s: must be a list of charge names"),
    gettext_noop("%(field)s: %(value)s is not an article number"),
    # lexlib/parsing/statute_text.py
    gettext_noop("no article (第…条) found"),
    gettext_noop("cannot read the number in heading %(heading)s"),
    gettext_noop("cannot read the article number in %(article)s"),
    gettext_noop("duplicate article %(label)s (first on line %(line)s)"),
    gettext_noop("article %(label)s comes after %(previous)s: article numbers must increase"),
    gettext_noop("article %(label)s has no text"),
    # lexlib/parsing/jsonl.py
    gettext_noop("too many lines: the limit is %(limit)s"),
    gettext_noop("line is %(size)s bytes, the limit is %(limit)s"),
    gettext_noop("invalid UTF-8 at byte %(byte)s"),
    gettext_noop("starts with a UTF-8 byte-order mark (BOM); save the file as UTF-8 without BOM"),
    gettext_noop("NUL character at column %(column)s"),
    gettext_noop("nested deeper than %(limit)s levels"),
    gettext_noop("unexpected data after the JSON value at column %(column)s"),
    gettext_noop("invalid JSON: %(json_error)s at column %(column)s"),
    gettext_noop("invalid JSON: %(error)s"),
    gettext_noop("the line must be a JSON object, not %(what)s"),
    gettext_noop("duplicate key %(key)s"),
    gettext_noop("%(constant)s is not valid JSON"),
    gettext_noop("NUL character (\\u0000) in a string"),
    gettext_noop("lone surrogate %(code)s in a string"),
    gettext_noop("integer with more than %(digits)s digits"),
    gettext_noop("number %(value)s is out of range"),
    # lexlib/parsing/formats.py (and the hints it gives about a file's encoding)
    gettext_noop("cannot tell the format (%(why)s); choose it with --format (%(formats)s) or on the upload form"),
    gettext_noop("a UTF-8 byte-order mark at the start of the file was ignored"),
    gettext_noop("the file is not UTF-8; it was read as GB18030 (GBK)"),
    # lexlib/parsing/judgment.py (and the notes beside a parsed outcome)
    gettext_noop("no 判决如下 section: is this a judgment (判决书)? Rulings (裁定书) carry no sentence"),
    gettext_noop("no facts found: expected 经审理查明 or the prosecution's 指控 before 本院认为"),
    gettext_noop("the verdict acquits %(names)s (无罪): acquittals are not imported as precedents"),
    gettext_noop("the verdict only upholds an earlier judgment (维持原判): import the first-instance judgment"),
    gettext_noop("no defendant convicted in the 判决如下 section (expected 被告人…犯…罪)"),
    gettext_noop("several defendants (%(names)s) are sentenced in one clause with 分别: the parser does not guess "
                 "who got which term"),
    gettext_noop("%(name)s is sentenced twice in the 判决如下 section"),
    gettext_noop("cannot read the charge of %(name)s in %(clause)s"),
    gettext_noop("cannot read the fine of %(name)s in %(clause)s"),
    gettext_noop("cannot read the term of %(name)s in %(clause)s"),
    gettext_noop("%(name)s has several sentences and no combined one (决定执行) in %(clause)s"),
    gettext_noop("cannot read the length of the term of %(name)s in %(clause)s"),
    gettext_noop("没收个人财产 (confiscation) is not a fine and is not recorded as one"),
    gettext_noop("%(days)s days counted as %(months)s month(s)"),
    # lexlib/parsing/documents.py
    gettext_noop("the file is empty"),
    gettext_noop("unsupported file type %(suffix)s; upload TXT, DOCX or PDF"),
    gettext_noop("the file name says %(suffix)s but the content is %(kind)s"),
    gettext_noop("the DOCX has %(count)s entries; the limit is %(limit)s"),
    gettext_noop("the DOCX contains duplicate entry names"),
    gettext_noop("the DOCX would unpack to %(size)s MB; the limit is %(limit)s MB (zip bomb?)"),
    gettext_noop("not a Word document: %(names)s is missing"),
    gettext_noop("the file is %(size)s bytes; the limit is %(limit)s bytes"),
    gettext_noop("no text found in the PDF (a scanned PDF needs OCR first)"),
    gettext_noop("no text found in the %(kind)s"),
    gettext_noop("binary content (NUL bytes); upload plain text, DOCX or PDF"),
    gettext_noop("the file has a UTF-8 byte-order mark but is not valid UTF-8"),
    gettext_noop("the text is neither UTF-8 nor GB18030"),
    gettext_noop("binary content (control character %(char)s) in a text file"),
    gettext_noop("a ZIP archive that is not a Word document (DOCX)"),
    gettext_noop("the content is a legacy Office file (.doc); save it as DOCX, not TXT, DOCX or PDF"),
    gettext_noop("the content is an RTF document; save it as DOCX or TXT, not TXT, DOCX or PDF"),
    gettext_noop("the content is UTF-16 text; save it as UTF-8, not TXT, DOCX or PDF"),
    gettext_noop("the content is %(what)s, not TXT, DOCX or PDF"),
    gettext_noop("the archive has %(count)s entries; the limit is %(limit)s"),
    gettext_noop("the archive is corrupt"),
    gettext_noop("the archive is corrupt (no central directory)"),
    gettext_noop("ZIP64 archives are not accepted"),
    gettext_noop("the DOCX entry %(name)s is encrypted"),
    gettext_noop("the DOCX entry %(name)s uses an unsupported compression method"),
    gettext_noop("the DOCX contains an embedded archive or object (%(name)s); remove it and re-save"),
    gettext_noop("the DOCX entry %(name)s is compressed %(ratio)s:1; the limit is %(limit)s:1 (zip bomb?)"),
    gettext_noop("the PDF is password-protected"),
    gettext_noop("the PDF has %(count)s pages; the limit is %(limit)s"),
    gettext_noop("word/document.xml is larger than its declared size"),
    # lexlib/parsing/sandbox.py: "unparseable: <why the parser child failed>"
    gettext_noop("unparseable: %(reason)s"),
    gettext_noop("the parser returned an unexpected result"),
    gettext_noop("the parser process could not be started"),
    gettext_noop("the parser exceeded the wall-clock limit of %(seconds)s s"),
    gettext_noop("the parser output exceeded the limit of %(limit)s MB"),
    gettext_noop("the parser exceeded the CPU limit of %(seconds)s s"),
    gettext_noop("the parser was killed (CPU limit %(seconds)s s or memory limit %(limit)s MB)"),
    gettext_noop("the parser exceeded its output limit"),
    gettext_noop("the parser crashed with %(signal)s (%(reason)s)"),
    gettext_noop("the parser crashed with %(signal)s"),
    gettext_noop("the parser exited with status %(status)s without a result"),
    gettext_noop("memory limit of %(limit)s MB exceeded"),
    gettext_noop("nesting too deep (recursion limit)"),
    gettext_noop("the parser failed"),
    # apps/corpus/services/importing.py
    gettext_noop("expected one JSON object"),
    gettext_noop("%(key)s: expected a list of charge names or one charge name"),
    gettext_noop("nothing to import: no file"),
    gettext_noop("unknown format %(format)s: use one of %(formats)s"),
    gettext_noop("unknown format %(format)s"),
    gettext_noop("the files are of different formats (%(formats)s); import them separately or choose the format"),
    gettext_noop("files in our own schema are imported one file per import"),
    gettext_noop("a statute text is imported one file per import"),
    gettext_noop("unsupported file type %(suffix)s: use .jsonl, .json, .txt, .docx or .pdf"),
    gettext_noop("the file holds no records"),
    gettext_noop("first statute record; one file must hold one kind of record"),
    gettext_noop("first interpretation record; one file must hold one kind of record"),
    gettext_noop("first checklist record; one file must hold one kind of record"),
    gettext_noop("first case record; one file must hold one kind of record"),
    gettext_noop("a plain-text statute needs the law's title"),
    gettext_noop("the text says it takes effect on %(date)s; give that as the effective date if this text amends "
                 "the stored one"),
    gettext_noop("file too large: %(size)s bytes (limit %(limit)s)"),
    gettext_noop("parsed judgments are published only after an admin has confirmed their outcomes "
                 "(the dry run shows them)"),
    gettext_noop("rejected by the database: %(error)s"),
    gettext_noop("internal error; see the server log"),
    # apps/corpus/services/planning.py: the first line of a refusal; the diff follows on the next lines
    gettext_noop("precedent %(id)s already exists with a different fact text"),
    gettext_noop("%(label)s conflicts with the stored version in force %(valid_from)s–%(valid_to)s (an amendment "
                 "needs its effective date: valid_from in JSONL, --effective-date or the form's effective date for "
                 "a statute text):"),
    gettext_noop("%(label)s conflicts with the stored version in force %(valid_from)s–%(valid_to)s (the effective "
                 "date %(date)s is not after the start of the version in force; a version is never overwritten):"),
    gettext_noop("%(label)s conflicts with the stored version in force %(valid_from)s–%(valid_to)s (mark the upload "
                 "as an amendment to add a new version):"),
    gettext_noop("%(label)s conflicts with the stored version in force %(valid_from)s–%(valid_to)s:"),
    # apps/corpus/services/appliers.py
    gettext_noop("interpretation %(id)s already exists with a different text:"),
    gettext_noop("no statute text for article %(key)s: import the statutes first"),
    gettext_noop("%(label)s already has a different imported checklist; upload it as an amendment to replace it"),
)

# Phrases that only occur inside a reason, as the value of one of its placeholders.
TERMS = _rows(
    # JSON types (records.py, jsonl.py)
    gettext_noop("a non-empty string"),
    gettext_noop("a string"),
    gettext_noop("an integer"),
    gettext_noop("true or false"),
    gettext_noop("a list"),
    gettext_noop("an object"),
    gettext_noop("a boolean"),
    gettext_noop("a number"),
    gettext_noop("an array"),
    gettext_noop("null"),
    # Python's JSON decoder, after "invalid JSON: "
    gettext_noop("Expecting value"),
    gettext_noop("Expecting property name enclosed in double quotes"),
    gettext_noop("Expecting ':' delimiter"),
    gettext_noop("Expecting ',' delimiter"),
    gettext_noop("Unterminated string starting"),
    gettext_noop("Invalid control character"),
    gettext_noop("Invalid \\escape"),
    gettext_noop("Invalid \\uXXXX escape"),
    # why the format cannot be told (formats.py)
    gettext_noop("its records look like %(first)s and %(second)s"),
    gettext_noop("unsupported file type %(suffix)s"),
    gettext_noop("the text could be a judgment or a statute"),
    gettext_noop("the text is neither a judgment (判决如下) nor a statute (lines starting 第…条)"),
    gettext_noop("(none)"),
    # what a refused document really is (documents.py)
    gettext_noop("a Windows executable"),
    gettext_noop("an ELF executable"),
    gettext_noop("a Mach-O executable"),
    gettext_noop("a Mach-O or Java class file"),
    gettext_noop("a PNG image"),
    gettext_noop("a JPEG image"),
    gettext_noop("a GIF image"),
    gettext_noop("a TIFF image"),
    gettext_noop("a RAR archive"),
    gettext_noop("a 7-Zip archive"),
    gettext_noop("a gzip archive"),
    gettext_noop("an xz archive"),
    gettext_noop("an empty ZIP archive"),
    gettext_noop("a split ZIP archive"),
)
_NESTED = TERMS + REASONS


def translate_reason(text: str) -> str:
    """A stored import reason in the active language: its first line translated, any further lines
    (a diff) unchanged; a reason no row knows comes back as it is."""
    if not text:
        return text
    first, newline, rest = text.partition("\n")
    return _translate(first, REASONS) + newline + rest


def _translate(line: str, rows: tuple[Row, ...]) -> str:
    found = first_match(line, rows)
    if found:
        row, match = found
        return fill(row, match, {name: _translate(value, _NESTED) if name in TRANSLATED_PLACEHOLDERS else value
                                 for name, value in match.groupdict().items()})
    # "name.jsonl: <reason>", "pjjg: <reason>", "ValueError: <reason>": keep the prefix, translate the rest.
    prefix, colon, rest = line.partition(": ")
    if colon and prefix and rest:
        translated = _translate(rest, rows)
        if translated != rest:
            return gettext(PREFIXED) % {"prefix": prefix, "reason": translated}
    return line


# What the search-index follow-up after an import says about each index it brought up to date
# (apps/corpus/services/indexing.py, search_indexes_follow). The report keeps the English; the import
# page shows it through translate_follow_up. Kept apart from REASONS: these are outcomes, not refusals.
FOLLOW_UPS = _rows(
    gettext_noop("up to date"),
    gettext_noop("rebuilt over %(count)s documents"),
    gettext_noop("%(count)s documents added or changed, %(total)s in all"),
    gettext_noop("%(count)s documents embedded, %(removed)s removed"),
    gettext_noop("another search index build was running; check the freshness panel"),
)


def translate_follow_up(text: str) -> str:
    """One stored follow-up outcome or detail in the active language; an unknown one (an exception) as it is."""
    return _translate(text, FOLLOW_UPS) if text else text
