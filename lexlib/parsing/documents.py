"""Safe text extraction from uploaded TXT, DOCX and PDF files.

Order of defence, cheapest first:
1. size limit, before anything looks inside the file;
2. the type comes from magic bytes (an .exe renamed .pdf is refused; so is a PDF
   named .txt), and the file name may only confirm it;
3. DOCX: zip-bomb checks on the central directory only (entry count, total
   uncompressed size, per-entry ratio, nested archives), nothing is inflated;
4. DOCX and PDF parsing happens in a resource-limited child (sandbox.run_limited);
   DOCX XML is read with defusedxml, refusing any DTD, entity or external reference.
TXT is decoded in-process: decoding is linear and cannot explode.
"""

from __future__ import annotations

import codecs
import io
import re
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from .errors import DocumentError
from .sandbox import DEFAULT_CPU_S, DEFAULT_MEM_MB, DEFAULT_WALL_S, run_limited

_MB = 1024 * 1024
DEFAULT_MAX_BYTES = 20 * _MB
MAX_ZIP_ENTRIES = 2000
MAX_ZIP_UNCOMPRESSED = 100 * _MB
MAX_ZIP_RATIO = 200
# Entries below this size cannot bomb anything, whatever their ratio (a 3 kB
# run of identical XML attributes legitimately compresses > 200:1).
_RATIO_FLOOR = 64 * 1024
MAX_PDF_PAGES = 5000

KINDS = ("txt", "docx", "pdf")
_EXTENSIONS = {".txt": "txt", ".text": "txt", ".docx": "docx", ".pdf": "pdf"}
_DOCX_REQUIRED = ("[Content_Types].xml", "word/document.xml")
_NESTED_ARCHIVE_SUFFIXES = (
    ".zip", ".docx", ".docm", ".xlsx", ".xlsm", ".pptx", ".pptm", ".odt", ".ods", ".odp", ".jar", ".7z",
    ".rar", ".gz", ".tgz", ".bz2", ".xz", ".tar", ".cab",
)  # fmt: skip
_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22

# Magic numbers of things people rename into .pdf/.docx/.txt; first match wins.
_FOREIGN_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"MZ", "a Windows executable"),
    (b"\x7fELF", "an ELF executable"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xce\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "a Mach-O or Java class file"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a legacy Office file (.doc); save it as DOCX"),
    (b"{\\rtf", "an RTF document; save it as DOCX or TXT"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"PK\x07\x08", "a split ZIP archive"),
    (b"\xff\xfe", "UTF-16 text; save it as UTF-8"),
    (b"\xfe\xff", "UTF-16 text; save it as UTF-8"),
)
# C0 controls other than tab, newline, carriage return and form feed mean binary data.
_CONTROL_RE = re.compile("[\x01-\x08\x0b\x0e-\x1f\x7f]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

_W_NAMESPACES = frozenset(
    {
        "http://schemas.openxmlformats.org/wordprocessingml/2006/main",  # transitional (what Word writes)
        "http://purl.oclc.org/ooxml/wordprocessingml/main",  # strict OOXML
    }
)


@dataclass(frozen=True)
class ExtractedText:
    kind: str  # "txt" | "docx" | "pdf"
    text: str  # newlines normalised to \n; no NULs or lone surrogates
    pages: int | None = None  # PDF only


# --- public API ----------------------------------------------------------------------


def sniff_kind(data: bytes, filename: str) -> str:
    """"txt" | "docx" | "pdf" from the content; DocumentError for anything else or a lying extension."""
    if not data:
        raise DocumentError("the file is empty")
    kind = _kind_from_content(data)
    extension = PurePath(filename or "").suffix.lower()
    if extension:
        if extension not in _EXTENSIONS:
            raise DocumentError(f"unsupported file type {extension!r}; upload TXT, DOCX or PDF")
        if _EXTENSIONS[extension] != kind:
            raise DocumentError(f"the file name says {extension} but the content is {kind.upper()}")
    return kind


def check_docx_archive(
    data: bytes,
    *,
    max_entries: int = MAX_ZIP_ENTRIES,
    max_uncompressed: int = MAX_ZIP_UNCOMPRESSED,
    max_ratio: int = MAX_ZIP_RATIO,
) -> None:
    """Zip-bomb and smuggling checks from the central directory alone; DocumentError on failure."""
    archive = _open_zip(data, max_entries)
    infos = archive.infolist()
    if len(infos) > max_entries:
        raise DocumentError(f"the DOCX has {len(infos)} entries; the limit is {max_entries}")
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        # Two entries with one name: which one a reader picks is implementation-defined.
        raise DocumentError("the DOCX contains duplicate entry names")
    total = 0
    for info in infos:
        _check_entry(info, max_ratio)
        total += info.file_size
    if total > max_uncompressed:
        raise DocumentError(
            f"the DOCX would unpack to {total // _MB} MB; the limit is {max_uncompressed // _MB} MB (zip bomb?)"
        )
    missing = [name for name in _DOCX_REQUIRED if name not in set(names)]
    if missing:
        raise DocumentError(f"not a Word document: {', '.join(missing)} is missing")


def extract_text(
    data: bytes,
    filename: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    mem_mb: int = DEFAULT_MEM_MB,
    cpu_s: int = DEFAULT_CPU_S,
    wall_s: float = DEFAULT_WALL_S,
) -> ExtractedText:
    """The text of an uploaded TXT, DOCX or PDF; DocumentError with a reason the admin can act on."""
    if len(data) > max_bytes:
        raise DocumentError(f"the file is {len(data)} bytes; the limit is {max_bytes} bytes")
    kind = sniff_kind(data, filename)
    pages: int | None = None
    if kind == "txt":
        text = decode_text(data)
    else:
        if kind == "docx":
            check_docx_archive(data)
        target = f"{__name__}:{'docx_text_child' if kind == 'docx' else 'pdf_text_child'}"
        result = run_limited(target, data, mem_mb=mem_mb, cpu_s=cpu_s, wall_s=wall_s)
        text, pages = _unpack_result(result)
    text = _clean(text)
    if not text.strip():
        hint = " (a scanned PDF needs OCR first)" if kind == "pdf" else ""
        raise DocumentError(f"no text found in the {kind.upper()}{hint}")
    return ExtractedText(kind, text, pages)


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without BOM), else GB18030; DocumentError for binary content."""
    if b"\x00" in data:
        raise DocumentError("binary content (NUL bytes); upload plain text, DOCX or PDF")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        if data.startswith(codecs.BOM_UTF8):
            raise DocumentError("the file has a UTF-8 byte-order mark but is not valid UTF-8") from None
        try:
            text = data.decode("gb18030")
        except UnicodeDecodeError:
            raise DocumentError("the text is neither UTF-8 nor GB18030") from None
    control = _CONTROL_RE.search(text)
    if control:
        raise DocumentError(f"binary content (control character U+{ord(control.group()):04X}) in a text file")
    return text


# --- content sniffing -------------------------------------------------------------------


def _kind_from_content(data: bytes) -> str:
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        names = set(_open_zip(data, MAX_ZIP_ENTRIES).namelist())
        if all(name in names for name in _DOCX_REQUIRED):
            return "docx"
        raise DocumentError("a ZIP archive that is not a Word document (DOCX)")
    for magic, what in _FOREIGN_MAGIC:
        if data.startswith(magic):
            raise DocumentError(f"the content is {what}, not TXT, DOCX or PDF")
    decode_text(data)  # raises for binary content
    return "txt"


def _open_zip(data: bytes, max_entries: int) -> zipfile.ZipFile:
    """Open the central directory, refusing absurd entry counts before zipfile parses them."""
    count = _declared_entry_count(data)
    if count > max_entries:
        raise DocumentError(f"the archive has {count} entries; the limit is {max_entries}")
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, struct.error, NotImplementedError, OverflowError):
        raise DocumentError("the archive is corrupt") from None


def _declared_entry_count(data: bytes) -> int:
    """Total entries from the end-of-central-directory record (the comment may follow it)."""
    position = data.rfind(_EOCD, max(0, len(data) - _EOCD_SIZE - 0xFFFF))
    if position < 0 or len(data) - position < _EOCD_SIZE:
        raise DocumentError("the archive is corrupt (no central directory)")
    total_entries = struct.unpack_from("<H", data, position + 10)[0]
    if total_entries == 0xFFFF:
        raise DocumentError("ZIP64 archives are not accepted")  # a < 20 MB DOCX never needs ZIP64
    return total_entries


def _check_entry(info: zipfile.ZipInfo, max_ratio: int) -> None:
    name = info.filename
    if info.flag_bits & 0x1:
        raise DocumentError(f"the DOCX entry {name!r} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise DocumentError(f"the DOCX entry {name!r} uses an unsupported compression method")
    lowered = name.lower()
    if lowered.endswith(_NESTED_ARCHIVE_SUFFIXES) or lowered.startswith("word/embeddings/"):
        raise DocumentError(f"the DOCX contains an embedded archive or object ({name!r}); remove it and re-save")
    if info.file_size > _RATIO_FLOOR and info.file_size > max_ratio * max(info.compress_size, 1):
        ratio = info.file_size // max(info.compress_size, 1)
        raise DocumentError(f"the DOCX entry {name!r} is compressed {ratio}:1; the limit is {max_ratio}:1 (zip bomb?)")


# --- results ---------------------------------------------------------------------------------


def _unpack_result(result: Any) -> tuple[str, int | None]:
    if not isinstance(result, dict) or not isinstance(result.get("text"), str):
        raise DocumentError("unparseable: the parser returned an unexpected result")
    pages = result.get("pages")
    if pages is not None and (isinstance(pages, bool) or not isinstance(pages, int)):
        raise DocumentError("unparseable: the parser returned an unexpected result")
    return result["text"], pages


def _clean(text: str) -> str:
    """Normalise newlines and drop what PostgreSQL text cannot hold (NUL, lone surrogates)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return _SURROGATE_RE.sub("\ufffd", text)


# --- child-side extractors (run inside sandbox.run_limited) ----------------------------------


def docx_text_child(data: bytes) -> dict[str, Any]:
    """Paragraph text of word/document.xml, one paragraph per line."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    info = archive.getinfo("word/document.xml")
    with archive.open(info) as member:
        paragraphs = list(_docx_paragraphs(_CappedReader(member, info.file_size)))
    return {"text": "\n".join(paragraphs), "pages": None}


def pdf_text_child(data: bytes) -> dict[str, Any]:
    """Text of every page with pypdf (imported here: only the sandboxed child needs it)."""
    import logging
    import warnings

    # Broken PDFs make pypdf warn once per object; nobody reads it and stderr is size-limited.
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    # Many PDFs are "encrypted" with an empty user password; decrypt() returns a
    # PasswordType IntEnum whose NOT_DECRYPTED member is 0.
    if reader.is_encrypted and not reader.decrypt(""):
        raise ValueError("the PDF is password-protected")
    count = len(reader.pages)
    if count > MAX_PDF_PAGES:
        raise ValueError(f"the PDF has {count} pages; the limit is {MAX_PDF_PAGES}")
    texts = [page.extract_text() or "" for page in reader.pages]
    return {"text": "\n".join(texts), "pages": count}


class _CappedReader:
    """A read-only stream that fails once more than `limit` bytes come out of it.

    zipfile already stops at the declared size; this makes the bound explicit
    rather than an implementation detail of the zip reader.
    """

    def __init__(self, stream: Any, limit: int) -> None:
        self._stream = stream
        self._left = limit

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size if size >= 0 else self._left + 1)
        self._left -= len(chunk)
        if self._left < 0:
            raise ValueError("word/document.xml is larger than its declared size")
        return chunk


def _docx_paragraphs(stream: _CappedReader) -> Iterator[str]:
    from defusedxml.ElementTree import iterparse

    # forbid_dtd stops both the billion-laughs and XXE families at the DOCTYPE,
    # before any entity is declared; WordprocessingML never needs a DTD.
    events = iterparse(stream, events=("start", "end"), forbid_dtd=True, forbid_entities=True, forbid_external=True)
    open_paragraphs: list[list[str]] = []  # a stack: text boxes nest paragraphs inside paragraphs
    run_depth = 0  # w:tab also defines tab stops in paragraph properties; only tabs inside runs are text
    for event, element in events:
        name = _w_name(element.tag)
        if name is None:
            continue
        if event == "start":
            if name == "p":
                open_paragraphs.append([])
            elif name == "r":
                run_depth += 1
            continue
        if name == "r":
            run_depth -= 1
        elif name == "p" and open_paragraphs:
            yield "".join(open_paragraphs.pop())
            element.clear()  # keep memory flat on long documents
        elif open_paragraphs and run_depth > 0:
            if name == "t":
                open_paragraphs[-1].append(element.text or "")
            elif name == "tab":
                open_paragraphs[-1].append("\t")
            elif name in ("br", "cr"):
                open_paragraphs[-1].append("\n")


def _w_name(tag: Any) -> str | None:
    """Local name of a WordprocessingML element, None for anything else (comments, other namespaces)."""
    if not isinstance(tag, str) or not tag.startswith("{"):
        return None
    namespace, _, local = tag[1:].partition("}")
    return local if namespace in _W_NAMESPACES else None
