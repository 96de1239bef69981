"""Text extraction from uploads: type sniffing, zip/XML bombs, hostile PDFs and the sandbox limits.

Every fixture is built inside the test; nothing is downloaded.
"""

import io
import os
import signal
import struct
import time
import zipfile
import zlib

import pytest

from lexlib.parsing.documents import (
    ExtractedText,
    check_docx_archive,
    extract_text,
    sniff_kind,
)
from lexlib.parsing.errors import DocumentError, ImportValidationError, LineError
from lexlib.parsing.sandbox import run_limited

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/word/document.xml" '
    b'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    b"</Types>"
)
HERE = __name__  # the sandbox imports the test-only targets below from this module


# --- fixture builders ------------------------------------------------------------------------


def document_xml(body: str, prolog: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>{prolog}'
        f'<w:document xmlns:w="{W_NS}"><w:body>{body}</w:body></w:document>'
    ).encode()


def paragraph(*runs: str) -> str:
    return "<w:p>" + "".join(f"<w:r>{run}</w:r>" for run in runs) + "</w:p>"


def make_docx(document: bytes, extra: dict[str, bytes] | None = None, level: int = 6) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("word/document.xml", document)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return buffer.getvalue()


def make_pdf(objects: list[bytes]) -> bytes:
    """A PDF with a correct xref table; object i+1 is objects[i], object 1 is the catalog."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def stream(content: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(content), extra) + content + b"\nendstream"


TO_UNICODE = b"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
2 beginbfchar
<0001> <8BC8>
<0002> <9A97>
endbfchar
endcmap
CMapName currentdict /CMap defineresource pop
end
end"""


def text_pdf() -> bytes:
    """One page: "Article 266" in Helvetica and 诈骗 in a CID font mapped through ToUnicode."""
    content = b"BT /F1 12 Tf 72 720 Td (Article 266) Tj ET\nBT /F2 12 Tf 72 700 Td <00010002> Tj ET"
    return make_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
            b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>",
            stream(content),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /Identity-H "
            b"/DescendantFonts [7 0 R] /ToUnicode 8 0 R >>",
            b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "
            b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>",
            stream(TO_UNICODE),
        ]
    )


def understate_size(data: bytes, name: str, declared: int) -> bytes:
    """Rewrite the uncompressed size of one entry in both its local and central headers."""
    patched = bytearray(data)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    struct.pack_into("<I", patched, info.header_offset + 22, declared)
    position = 0
    while (position := data.find(b"PK\x01\x02", position)) >= 0:
        name_length = struct.unpack_from("<H", data, position + 28)[0]
        if data[position + 46 : position + 46 + name_length] == name.encode():
            struct.pack_into("<I", patched, position + 24, declared)
        position += 4
    return bytes(patched)


# --- test-only sandbox targets (imported by the child process) -------------------------------


def echo_length(data: bytes) -> dict:
    print("noise on stdout must not corrupt the result")
    return {"length": len(data)}


def allocate_two_gigabytes(data: bytes) -> int:
    block = bytearray(2 * 1024**3)
    return len(block)


def spin_forever(data: bytes) -> None:
    while True:
        pass


def sleep_forever(data: bytes) -> None:
    time.sleep(600)


def fail_loudly(data: bytes) -> None:
    raise RuntimeError("boom")


def crash(data: bytes) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def flood_output(data: bytes) -> str:
    return "x" * (4 * 1024 * 1024)


def environment_names(data: bytes) -> list:
    return sorted(os.environ)


# --- sniffing -----------------------------------------------------------------------------------


def test_it_sniffs_each_supported_kind_from_its_content():
    assert sniff_kind("第一条　文本。".encode(), "law.txt") == "txt"
    assert sniff_kind(make_docx(document_xml(paragraph("<w:t>一</w:t>"))), "law.docx") == "docx"
    assert sniff_kind(text_pdf(), "law.pdf") == "pdf"
    assert sniff_kind(text_pdf(), "no-extension") == "pdf"


@pytest.mark.parametrize(
    ("data", "filename", "reason"),
    [
        (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + bytes(200), "statute.pdf", "Windows executable"),
        (b"\x7fELF\x02\x01\x01" + bytes(100), "statute.txt", "ELF executable"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), "statute.docx", "legacy Office file"),
        (b"\x89PNG\r\n\x1a\n" + bytes(50), "statute.pdf", "PNG image"),
        (b"plain text pretending to be a pdf", "statute.pdf", "the file name says .pdf but the content is TXT"),
        (b"%PDF-1.4\n...", "statute.txt", "the file name says .txt but the content is PDF"),
        (b"some text", "statute.exe", "unsupported file type '.exe'"),
        (b"", "statute.txt", "the file is empty"),
        (b"abc\x00def", "statute.txt", "NUL bytes"),
        ("第一条".encode("utf-16"), "statute.txt", "UTF-16"),
        (b"text with a bell \x07", "statute.txt", r"control character U\+0007"),
    ],
)
def test_it_refuses_spoofed_or_unsupported_content(data, filename, reason):
    with pytest.raises(DocumentError, match=reason):
        sniff_kind(data, filename)


def test_it_reports_a_refused_document_like_any_other_rejected_import():
    with pytest.raises(ImportValidationError) as info:
        extract_text(b"MZ" + bytes(100), "setup.pdf")
    assert isinstance(info.value, DocumentError)
    assert info.value.errors == [LineError(0, "the content is a Windows executable, not TXT, DOCX or PDF")]
    assert str(info.value) == "the content is a Windows executable, not TXT, DOCX or PDF"


def test_it_refuses_a_zip_that_is_not_a_word_document():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(DocumentError, match="not a Word document"):
        sniff_kind(buffer.getvalue(), "statute.docx")


def test_it_refuses_a_truncated_zip():
    data = make_docx(document_xml(paragraph("<w:t>一</w:t>")))
    with pytest.raises(DocumentError, match="corrupt"):
        sniff_kind(data[: len(data) // 2], "statute.docx")


# --- TXT -------------------------------------------------------------------------------------------


def test_it_decodes_utf8_with_or_without_bom_and_normalises_newlines():
    text = "第二百六十六条　诈骗公私财物。\r\n第二款。"
    assert extract_text(text.encode(), "a.txt") == ExtractedText("txt", "第二百六十六条　诈骗公私财物。\n第二款。")
    assert extract_text(b"\xef\xbb\xbf" + text.encode(), "a.txt").text.startswith("第二百六十六条")


def test_it_decodes_gb18030_text():
    text = "第二百六十六条　诈骗公私财物，数额较大的，处三年以下有期徒刑。"
    assert extract_text(text.encode("gb18030"), "gbk.txt").text == text


def test_it_refuses_files_over_the_size_limit_before_looking_inside():
    with pytest.raises(DocumentError, match="the limit is 1000 bytes"):
        extract_text(b"MZ" + bytes(5000), "x.pdf", max_bytes=1000)


def test_it_refuses_a_document_without_text():
    with pytest.raises(DocumentError, match="no text found"):
        extract_text(b"  \n\n ", "empty.txt")


# --- DOCX -------------------------------------------------------------------------------------------


def test_it_extracts_paragraphs_from_a_real_docx():
    body = (
        '<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>'
        "<w:r><w:t>第二百六十六条</w:t></w:r><w:r><w:tab/><w:t>诈骗公私财物，</w:t></w:r>"
        "<w:r><w:t>数额较大的。</w:t></w:r></w:p>"
        + paragraph("<w:t>第二款</w:t>", "<w:br/>", "<w:t>换行</w:t>")
        + "<w:tbl><w:tr><w:tc>" + paragraph("<w:t>表格中的文字</w:t>") + "</w:tc></w:tr></w:tbl>"
        + '<w:p><w:del><w:r><w:delText>已删除</w:delText></w:r></w:del></w:p>'
    )  # fmt: skip
    result = extract_text(make_docx(document_xml(body)), "statute.docx")
    assert result == ExtractedText("docx", "第二百六十六条\t诈骗公私财物，数额较大的。\n第二款\n换行\n表格中的文字\n")


def test_it_rejects_a_zip_bomb_docx_from_the_central_directory_alone():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        with archive.open("word/document.xml", "w") as member:
            zeros = bytes(1024 * 1024)
            for _ in range(200):  # 200 MB of zeros, under 1 MB compressed
                member.write(zeros)
    data = buffer.getvalue()
    assert len(data) < 2 * 1024 * 1024
    started = time.monotonic()
    with pytest.raises(DocumentError, match="zip bomb"):
        extract_text(data, "bomb.docx")
    assert time.monotonic() - started < 1  # nothing was inflated


def test_it_rejects_a_highly_compressed_entry_even_under_the_total_limit():
    data = make_docx(document_xml(paragraph("<w:t>一</w:t>")), {"word/media/pad.bin": bytes(5 * 1024 * 1024)}, level=9)
    with pytest.raises(DocumentError, match=r"compressed \d+:1; the limit is 200:1"):
        check_docx_archive(data)


def test_it_rejects_too_many_entries_and_nested_archives():
    many = make_docx(document_xml(""), {f"word/media/{i}.png": b"x" for i in range(2001)})
    with pytest.raises(DocumentError, match="the limit is 2000"):
        extract_text(many, "many.docx")
    nested = make_docx(document_xml(""), {"word/media/inner.zip": b"PK\x05\x06" + bytes(18)})
    with pytest.raises(DocumentError, match="embedded archive"):
        extract_text(nested, "nested.docx")
    embedded = make_docx(document_xml(""), {"word/embeddings/oleObject1.bin": b"\xd0\xcf\x11\xe0"})
    with pytest.raises(DocumentError, match="embedded archive or object"):
        extract_text(embedded, "ole.docx")


def test_it_rejects_a_docx_that_lies_about_its_uncompressed_size():
    body = "".join(paragraph(f"<w:t>第{i}段文字</w:t>") for i in range(3000))
    data = understate_size(make_docx(document_xml(body)), "word/document.xml", 1000)
    with pytest.raises(DocumentError, match="unparseable"):
        extract_text(data, "liar.docx")


def test_it_rejects_a_billion_laughs_docx_without_expanding_it():
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">' for i in range(1, 10)
    )
    data = make_docx(document_xml(paragraph("<w:t>&lol9;</w:t>"), prolog=f"<!DOCTYPE lolz [{entities}]>"))
    started = time.monotonic()
    with pytest.raises(DocumentError, match="unparseable: DTDForbidden"):
        extract_text(data, "laughs.docx")
    assert time.monotonic() - started < 5


def test_it_rejects_an_external_entity_docx_without_reading_the_file():
    prolog = '<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    data = make_docx(document_xml(paragraph("<w:t>&xxe;</w:t>"), prolog=prolog))
    with pytest.raises(DocumentError, match="unparseable: DTDForbidden") as info:
        extract_text(data, "xxe.docx")
    assert "root:" not in str(info.value)


# --- PDF ------------------------------------------------------------------------------------------------


def test_it_extracts_latin_and_chinese_text_from_a_real_pdf():
    result = extract_text(text_pdf(), "statute.pdf")
    assert result.kind == "pdf" and result.pages == 1
    assert "Article 266" in result.text
    assert "诈骗" in result.text


def hostile_pdfs() -> dict[str, bytes]:
    compressor = zlib.compressobj(1)
    zeros = bytes(1024 * 1024)
    bomb = b"".join(compressor.compress(zeros) for _ in range(100)) + compressor.flush()  # 100 MB of zeros
    # With a font resource pypdf has to inflate and interpret the content stream.
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
    )
    return {
        "flate bomb": make_pdf(
            [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page,
             stream(bomb, b"/Filter /FlateDecode ")]
        ),
        "page tree loop": make_pdf(
            [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
             b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>"]
        ),
        "broken xref": b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\nstartxref\n999999\n%%EOF\n",
    }  # fmt: skip


@pytest.mark.parametrize("name", ["flate bomb", "page tree loop", "broken xref"])
def test_it_survives_hostile_pdfs_within_its_limits(name):
    started = time.monotonic()
    try:
        result = extract_text(hostile_pdfs()[name], "hostile.pdf", wall_s=10)
    except DocumentError as error:
        assert str(error).startswith(("unparseable: ", "no text found"))  # a clean, explained refusal
    else:
        assert len(result.text) < 80_000_000
    assert time.monotonic() - started < 15


# --- the sandbox itself ------------------------------------------------------------------------------------


def test_it_runs_a_target_in_a_child_and_returns_its_json_result():
    assert run_limited(f"{HERE}:echo_length", b"abc") == {"length": 3}


def test_it_reports_a_child_over_its_memory_limit():
    with pytest.raises(DocumentError, match="unparseable: memory limit of 256 MB exceeded"):
        run_limited(f"{HERE}:allocate_two_gigabytes", b"", mem_mb=256)


def test_it_reports_a_child_over_its_cpu_limit():
    with pytest.raises(DocumentError, match="unparseable: the parser exceeded the CPU limit of 1 s"):
        run_limited(f"{HERE}:spin_forever", b"", cpu_s=1, wall_s=10)


def test_it_kills_a_child_over_its_wall_clock_limit():
    started = time.monotonic()
    with pytest.raises(DocumentError, match="wall-clock limit of 1 s"):
        run_limited(f"{HERE}:sleep_forever", b"", wall_s=1)
    assert time.monotonic() - started < 5


def test_it_reports_exceptions_crashes_and_output_floods_as_unparseable():
    with pytest.raises(DocumentError, match="unparseable: RuntimeError: boom"):
        run_limited(f"{HERE}:fail_loudly", b"")
    with pytest.raises(DocumentError, match="unparseable: the parser crashed with SIGSEGV"):
        run_limited(f"{HERE}:crash", b"")
    with pytest.raises(DocumentError, match="output exceeded the limit of 1 MB"):
        run_limited(f"{HERE}:flood_output", b"", out_mb=1)
    with pytest.raises(DocumentError, match="unparseable: ModuleNotFoundError"):
        run_limited("no.such.module:target", b"")


def test_it_gives_the_child_no_secrets_from_the_parent_environment(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", "do-not-leak")
    assert run_limited(f"{HERE}:environment_names", b"") == ["LANG", "LC_ALL", "PATH"]


def test_it_refuses_a_malformed_target_path():
    with pytest.raises(ValueError):
        run_limited("os.system; rm -rf /", b"")
