"""Import reasons in the page language (apps/corpus/reasons.py).

The parsers and the import services keep writing their reasons in English (the stored report, the logs
and the command line keep that form); the import page shows each reason translated, with its numbers, ids
and quoted input kept, a file-name prefix kept, the lines of a diff unchanged, and a reason no row knows
shown as it is.
"""

import re

import pytest
from django.core.management import call_command
from django.utils import translation
from django.utils.translation import gettext

from apps.corpus.models import ImportBatch
from apps.corpus.reasons import PREFIXED, REASONS, TERMS, TRANSLATED_PLACEHOLDERS, translate_reason
from apps.corpus.services.importing import ImportOptions, corpus_import, parse_files
from lexlib.parsing.errors import ImportValidationError
from tests.corpus.conftest import case, jsonl, statute

CJK = re.compile(r"[\u4e00-\u9fff]")
_PLACEHOLDER = re.compile(r"%\(\w+\)s")
# Spans that are code or data whatever the language: `field` names, --options, .suffixes, \u escapes.
_CODE = re.compile(r"`[^`]*`|--[\w-]+|\.\w+|\\u\w{4}")
_WORD = re.compile(r"[A-Za-z][A-Za-z_]{2,}")
# Words a Chinese reason may keep: names of formats, encodings and limits, JSON literals, and the field
# names of our schema and of the CAIL2018 / LeCaRD records that a reason names on purpose.
TECHNICAL = {
    "JSON", "UTF", "BOM", "NUL", "DOCX", "PDF", "TXT", "ZIP", "Word", "Office", "RTF", "GBK", "CPU", "OCR", "MB",
    "YYYY", "null", "true", "false", "Windows", "ELF", "Mach", "Java", "PNG", "JPEG", "GIF", "TIFF", "RAR", "Zip",
    "gzip", "CAIL", "LeCaRD", "LeCaRDv", "sub", "valid_from", "fact", "meta", "life", "death", "life_imprisonment",
    "death_penalty", "ridx", "ajjbqk", "query", "pid", "pjjg", "word", "document", "JSONL",
}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(_CODE.sub(" ", text)))


# Every English word of the reason templates outside their placeholders.
TEMPLATE_WORDS = set().union(*(_words(_PLACEHOLDER.sub(" ", row.template)) for row in REASONS + TERMS))


def in_chinese(english: str) -> str:
    with translation.override("zh-hans"):
        return translate_reason(english)


def assert_translated(english: str, *, data: str = "") -> str:
    """The Chinese reason: it has Chinese, no English word of a template (but for the words of ``data``, the
    values the reason quotes), and every number of the English first line."""
    chinese = in_chinese(english)
    first = chinese.splitlines()[0]
    assert CJK.search(first), f"not translated: {english!r}"
    leftover = (_words(first) & TEMPLATE_WORDS) - TECHNICAL - _words(data)
    assert not leftover, f"{english!r} → {first!r} keeps {sorted(leftover)}"
    for number in re.findall(r"\d+", english.splitlines()[0]):
        assert number in first, f"{english!r} → {first!r} lost {number}"
    return chinese


@pytest.fixture(scope="module", autouse=True)
def compiled_catalog():
    """The Chinese catalogue compiled from locale/ (the .mo files are not in git), loaded afresh."""
    call_command("compilemessages", locale=["zh_Hans"], ignore_patterns=[".local", "node_modules", ".git"], verbosity=0)
    from django.utils.translation import trans_real

    trans_real._translations = {}
    trans_real._default = None


# --- (a) what the real parsers and importers write ----------------------------------------------------------


def _errors(exc_info) -> list[tuple[int, str]]:
    return [(e.line, e.reason) for e in exc_info.value.errors]


def test_the_jsonl_reader_and_the_record_validator_are_translated_with_their_lines_and_fields():
    from lexlib.parsing.jsonl import read_jsonl_partial
    from lexlib.parsing.records import validate_records_partial

    rows, errors = read_jsonl_partial(b'{"number": NaN}\n{"a": }\n{"a": 1, "a": 2}\n[1]\n')
    reasons = {e.line: e.reason for e in errors.errors}
    assert "不是有效的 JSON" in assert_translated(reasons[1], data="NaN")
    assert assert_translated(reasons[2]) == "JSON 无效（第 7 列）：缺少值"
    assert "键 'a' 重复" == assert_translated(reasons[3])
    assert assert_translated(reasons[4]) == "该行必须是 JSON 对象，而不是数组"

    no_text = {k: v for k, v in statute(264).items() if k != "text"}
    _, invalid = validate_records_partial("statute", [(1, no_text), (2, {**statute(266), "sub": "一"}),
                                                      (3, statute(264)), (4, statute(264))])
    reasons = [(e.line, e.reason) for e in invalid.errors]
    assert (1, "text: required field is missing") in reasons
    assert assert_translated("text: required field is missing", data="text") == "text：缺少必填字段"
    assert dict(reasons)[2] == "sub: must be an integer, got a string"
    assert assert_translated(dict(reasons)[2]) == "sub：应为整数，实际为字符串"
    assert dict(reasons)[4] == "key: duplicate of line 3"
    assert assert_translated(dict(reasons)[4], data="key") == "key：与第 3 行重复"

    _, invalid = validate_records_partial("case", [(1, case("c-1")), (2, case("c-1", fact="另一段事实，不同于第一条。"))])
    assert assert_translated(invalid.errors[0].reason, data="id") == "id：与第 1 行重复"


def test_a_statute_text_without_articles_or_with_decreasing_numbers_is_translated():
    from lexlib.parsing.statute_text import statute_rows

    with pytest.raises(ImportValidationError) as nothing:
        statute_rows("中华人民共和国某法\n总则")
    assert assert_translated(_errors(nothing)[0][1]) == "未找到任何条文（第…条）"

    with pytest.raises(ImportValidationError) as backwards:
        statute_rows("第二条　甲。\n第一条　乙。\n第三条\n第三条　丙。")
    reasons = dict(_errors(backwards))
    assert assert_translated(reasons[2]) == "第一条位于第二条之后：条文序号必须递增"
    assert assert_translated(reasons[3]) == "第三条没有条文内容"
    assert assert_translated(reasons[4]) == "第三条重复（首次出现在第 3 行）"


def test_format_document_and_converter_refusals_are_translated_with_the_file_name_kept():
    from lexlib.parsing.cail import cail_convert
    from lexlib.parsing.documents import extract_text
    from lexlib.parsing.formats import detect_document_format
    from lexlib.parsing.judgment import judgment_convert
    from lexlib.parsing.lecard import lecard_convert

    with pytest.raises(ImportValidationError) as unknown:
        parse_files([("a.jsonl", b"{}")], options=ImportOptions(format="xml"))
    formats = "lextrace cail2018 lecard judgment statute-txt"
    chinese = assert_translated(_errors(unknown)[0][1], data=f"xml {formats}")
    assert chinese.startswith("未知格式 'xml'：")

    with pytest.raises(ImportValidationError) as neither:
        detect_document_format("一段普通的文字。")
    assert "该文本既不是判决书" in assert_translated(_errors(neither)[0][1], data=formats)

    with pytest.raises(ImportValidationError) as executable:
        extract_text(b"MZ\x90\x00binary", "a.txt")
    assert assert_translated(_errors(executable)[0][1]) == "文件内容是 Windows 可执行文件，不是 TXT、DOCX 或 PDF"

    converted = judgment_convert([("判决书.txt", "某某人民法院\n刑事判决书\n经审理查明：……\n判决如下：\n驳回上诉，维持原判。")])
    reason = converted.errors[0].reason
    assert reason.startswith("判决书.txt: ")
    assert assert_translated(reason) == "判决书.txt：该判决仅维持原判：请导入一审判决书"

    record = {"fact": "被告人张某盗窃他人手机一部，价值人民币三千元，后被抓获。",
              "meta": {"accusation": [], "term_of_imprisonment": {"imprisonment": -1}}}
    cail = cail_convert(jsonl(record), filename="d.json")
    reasons = [e.reason for e in cail.errors]
    assert "meta.accusation: required, a non-empty list of charge names" in reasons
    for reason in reasons:
        assert_translated(reason, data="meta.accusation meta.term_of_imprisonment.imprisonment")

    lecard = lecard_convert(b'{"ridx": 7, "q": "\xe7\x9b\x97\xe7\xaa\x83", "crime": "x"}\n', filename="q.json")
    assert assert_translated(lecard.errors[0].reason, data="crime") == "q.json：crime：应为罪名列表"


@pytest.mark.django_db
def test_what_the_importer_finds_against_the_corpus_is_translated_and_a_diff_is_kept():
    checklist = {"article": 266, "sub": 0, "key": "266", "label": "第二百六十六条", "items": ["是否虚构事实"],
                 "charges": ["诈骗罪"], "related": []}
    batch = corpus_import(data=jsonl(checklist), filename="checklists.jsonl")
    assert batch.errors == [{"line": 1, "reason": "no statute text for article 266: import the statutes first"}]
    assert assert_translated(batch.errors[0]["reason"]) == "编号为 266 的法条尚无条文：请先导入法条"

    assert corpus_import(data=jsonl(statute(264)), filename="statutes.jsonl").status == "published"
    changed = corpus_import(data=jsonl(statute(264, text="盗窃公私财物，数额巨大的，处三年以上十年以下有期徒刑。")),
                            filename="statutes2.jsonl")
    reason = changed.errors[0]["reason"]
    english_first, *diff = reason.splitlines()
    assert english_first.startswith("第二百六十四条 conflicts with the stored version in force") and diff
    chinese = assert_translated(reason, data="valid_from JSONL effective date")
    assert chinese.splitlines()[0].startswith("第二百六十四条与已存储的现行版本（…–…）冲突（修正需要施行日期")
    assert chinese.splitlines()[1:] == diff, "the diff is shown as it is"


# --- (b) every row: an example of its own, a Chinese sentence in the compiled catalogue -------------------------

EXAMPLES = [
    "meta.x: unknown field (CAIL2018 records have fact and meta)",
    "per_defendant[0].nmae: unknown field",
    "number: required field is missing",
    "text: must not be null",
    "label: must not be empty",
    "record: must be an object, got a list",
    "term.months: must be at least 0, got -3",
    "term.months: must be at most 600, got 900",
    "charges[0]: must be a non-empty string, got null",
    "repealed: must be true or false, got a string",
    "charges[1]: must end in 罪, got '盗窃'",
    "valid_from: must be a date written YYYY-MM-DD, got '2020/01/01'",
    "valid_to: is not a real date: '2021-02-30'",
    "key: '267' does not match number 266 and sub 0 (expected '266')",
    "label: '第二百六十七条' does not match article 266 and sub 0",
    "label: '二六六' is not an article label such as 第二百六十六条",
    "law: unknown law '中华人民共和国民法'",
    "valid_to: 2019-01-01 is before valid_from 2020-01-01",
    "term.kind: unknown sentence kind '劳役'",
    "per_defendant[1].term: life and death cannot both be true",
    "label_source: unknown value 'guess' (expected one of benchmark_answers, gold, illustrative, mcq_answers)",
    "id: duplicate of line 12",
    "a record must be a JSON object",
    "cannot tell the record kind: expected `fact` (case), `items` + `article` (checklist), `number` + `text` (statute) "
    "or `id` + `text` + `articles` (interpretation)",
    "record: must be a JSON object",
    "fact: required, a non-empty string",
    "fact: only 9 characters once punctuation is removed; at least 20 are needed for a precedent",
    "meta: required, an object",
    "meta.accusation: required, a non-empty list of charge names",
    "meta.accusation[2]: must be a charge name, got 5",
    "meta.relevant_articles: must be a list of article numbers",
    "meta.relevant_articles[0]: must be an article number, got 'x'",
    "meta.criminals: must be a list of names",
    "meta.punish_of_money: must be a whole number of yuan, got 12.5",
    "meta.term_of_imprisonment: must be an object",
    "meta.term_of_imprisonment.imprisonment: must be a number of months (0 or more), got -1",
    "meta.term_of_imprisonment.death_penalty: must be true or false, got 'no'",
    "meta.term_of_imprisonment: life_imprisonment and death_penalty cannot both be true",
    "not a LeCaRD record: expected ridx+q (query), ajjbqk (candidate), id+query (LeCaRDv2 query) or pid+qw "
    "(LeCaRDv2 candidate)",
    "the query does not start with a judgment title (…刑事判决书)",
    "no known charge at the end of the title '张某某某一审刑事判决书'",
    "no verdict: neither pjjg nor a 判决如下 section in qw",
    "the facts have only 8 characters once punctuation is removed; at least 20 are needed for a precedent",
    "no charge: the record gives none and none could be read",
    "writId: required, a string or number identifying the record",
    "crime: must be a list of charge names",
    "article: '二六四' is not an article number",
    "no article (第…条) found",
    "cannot read the number in heading '第十万万章'",
    "cannot read the article number in '第一条之零'",
    "duplicate article 第三条 (first on line 3)",
    "article 第一条 comes after 第二条: article numbers must increase",
    "article 第三条之一 has no text",
    "too many lines: the limit is 200000",
    "line is 2000001 bytes, the limit is 2000000",
    "invalid UTF-8 at byte 17",
    "starts with a UTF-8 byte-order mark (BOM); save the file as UTF-8 without BOM",
    "NUL character at column 4",
    "nested deeper than 20 levels",
    "unexpected data after the JSON value at column 10",
    "invalid JSON: Expecting property name enclosed in double quotes at column 2",
    "invalid JSON: RecursionError",
    "the line must be a JSON object, not a boolean",
    "duplicate key 'text'",
    "-Infinity is not valid JSON",
    "NUL character (\\u0000) in a string",
    "lone surrogate \\udc00 in a string",
    "integer with more than 20 digits",
    "number '1e999' is out of range",
    "cannot tell the format (its records look like cail2018 and lecard); choose it with --format "
    "(lextrace | cail2018 | lecard | judgment | statute-txt) or on the upload form",
    "a UTF-8 byte-order mark at the start of the file was ignored",
    "the file is not UTF-8; it was read as GB18030 (GBK)",
    "no 判决如下 section: is this a judgment (判决书)? Rulings (裁定书) carry no sentence",
    "no facts found: expected 经审理查明 or the prosecution's 指控 before 本院认为",
    "the verdict acquits 丁某、戊某 (无罪): acquittals are not imported as precedents",
    "the verdict only upholds an earlier judgment (维持原判): import the first-instance judgment",
    "no defendant convicted in the 判决如下 section (expected 被告人…犯…罪)",
    "several defendants (甲某、乙某) are sentenced in one clause with 分别: the parser does not guess who got which term",
    "甲某 is sentenced twice in the 判决如下 section",
    "cannot read the charge of 甲某 in '被告人甲某判处有期徒刑一年'",
    "cannot read the fine of 甲某 in '被告人甲某犯盗窃罪，单处罚金'",
    "cannot read the term of 甲某 in '被告人甲某犯盗窃罪，判处刑罚'",
    "甲某 has several sentences and no combined one (决定执行) in '被告人甲某犯盗窃罪，判处有期徒刑一年；犯诈骗罪，判处拘役三个月'",
    "cannot read the length of the term of 甲某 in '被告人甲某犯盗窃罪，判处有期徒刑十万万年'",
    "没收个人财产 (confiscation) is not a fine and is not recorded as one",
    "45 days counted as 2 month(s)",
    "the file is empty",
    "unsupported file type '.exe'; upload TXT, DOCX or PDF",
    "the file name says .pdf but the content is DOCX",
    "the DOCX has 2500 entries; the limit is 2000",
    "the DOCX contains duplicate entry names",
    "the DOCX would unpack to 300 MB; the limit is 100 MB (zip bomb?)",
    "not a Word document: word/document.xml is missing",
    "the file is 30000000 bytes; the limit is 20971520 bytes",
    "no text found in the PDF (a scanned PDF needs OCR first)",
    "no text found in the DOCX",
    "binary content (NUL bytes); upload plain text, DOCX or PDF",
    "the file has a UTF-8 byte-order mark but is not valid UTF-8",
    "the text is neither UTF-8 nor GB18030",
    "binary content (control character U+0007) in a text file",
    "a ZIP archive that is not a Word document (DOCX)",
    "the content is a legacy Office file (.doc); save it as DOCX, not TXT, DOCX or PDF",
    "the content is an RTF document; save it as DOCX or TXT, not TXT, DOCX or PDF",
    "the content is UTF-16 text; save it as UTF-8, not TXT, DOCX or PDF",
    "the content is a 7-Zip archive, not TXT, DOCX or PDF",
    "the archive has 70000 entries; the limit is 2000",
    "the archive is corrupt",
    "the archive is corrupt (no central directory)",
    "ZIP64 archives are not accepted",
    "the DOCX entry 'word/document.xml' is encrypted",
    "the DOCX entry 'word/media/a.bin' uses an unsupported compression method",
    "the DOCX contains an embedded archive or object ('word/embeddings/oleObject1.bin'); remove it and re-save",
    "the DOCX entry 'word/document.xml' is compressed 900:1; the limit is 200:1 (zip bomb?)",
    "the PDF is password-protected",
    "the PDF has 6000 pages; the limit is 5000",
    "word/document.xml is larger than its declared size",
    "unparseable: the parser returned an unexpected result",
    "the parser returned an unexpected result",
    "the parser process could not be started",
    "the parser exceeded the wall-clock limit of 20 s",
    "the parser output exceeded the limit of 64 MB",
    "the parser exceeded the CPU limit of 10 s",
    "the parser was killed (CPU limit 10 s or memory limit 512 MB)",
    "the parser exceeded its output limit",
    "the parser crashed with SIGSEGV (memory limit of 512 MB exceeded)",
    "the parser crashed with SIGABRT",
    "the parser exited with status 3 without a result",
    "memory limit of 512 MB exceeded",
    "nesting too deep (recursion limit)",
    "the parser failed",
    "expected one JSON object",
    "'侵犯财产罪': expected a list of charge names or one charge name",
    "nothing to import: no file",
    "unknown format 'xml': use one of lextrace, cail2018, lecard, judgment, statute-txt",
    "unknown format 'xml'",
    "the files are of different formats (cail2018, lecard); import them separately or choose the format",
    "files in our own schema are imported one file per import",
    "a statute text is imported one file per import",
    "unsupported file type .xml: use .jsonl, .json, .txt, .docx or .pdf",
    "the file holds no records",
    "first statute record; one file must hold one kind of record",
    "first interpretation record; one file must hold one kind of record",
    "first checklist record; one file must hold one kind of record",
    "first case record; one file must hold one kind of record",
    "a plain-text statute needs the law's title",
    "the text says it takes effect on 2021-03-01; give that as the effective date if this text amends the stored one",
    "file too large: 300000000 bytes (limit 209715200)",
    "parsed judgments are published only after an admin has confirmed their outcomes (the dry run shows them)",
    'rejected by the database: duplicate key value violates unique constraint "corpus_article_key"',
    "internal error; see the server log",
    "precedent cail2018-0a1b2c3d4e5f6a7b already exists with a different fact text",
    "第二百六十四条 conflicts with the stored version in force …–… (an amendment needs its effective date: valid_from "
    "in JSONL, --effective-date or the form's effective date for a statute text):",
    "第二百六十四条 conflicts with the stored version in force 2021-03-01–… (the effective date 2020-01-01 is not after "
    "the start of the version in force; a version is never overwritten):",
    "第二百六十四条之一 conflicts with the stored version in force …–… (mark the upload as an amendment to add a new "
    "version):",
    "第二百六十四条 conflicts with the stored version in force 1997-10-01–2021-02-28:",
    "interpretation fa-2013-8-1 already exists with a different text:",
    "no statute text for article 133-1: import the statutes first",
    "第二百六十六条 already has a different imported checklist; upload it as an amendment to replace it",
]

# Each phrase of TERMS, as the reasons that quote it do.
TERM_EXAMPLES = [
    "a non-empty string", "a string", "an integer", "true or false", "a list", "an object", "a boolean", "a number",
    "an array", "null", "Expecting value", "Expecting property name enclosed in double quotes",
    "Expecting ':' delimiter", "Expecting ',' delimiter", "Unterminated string starting", "Invalid control character",
    "Invalid \\escape", "Invalid \\uXXXX escape", "its records look like cail2018 and lextrace",
    "unsupported file type .xml", "the text could be a judgment or a statute",
    "the text is neither a judgment (判决如下) nor a statute (lines starting 第…条)", "(none)",
    "a Windows executable", "an ELF executable", "a Mach-O executable", "a Mach-O or Java class file", "a PNG image",
    "a JPEG image", "a GIF image", "a TIFF image", "a RAR archive", "a 7-Zip archive", "a gzip archive",
    "an xz archive", "an empty ZIP archive", "a split ZIP archive",
]


def _first_row(text: str, rows):
    return next((row for row in rows if row.pattern.fullmatch(text)), None)


def test_every_reason_row_has_an_example_of_its_own():
    matched = {}
    for example in EXAMPLES:
        row = _first_row(example, REASONS)
        assert row is not None, f"no row matches {example!r}"
        matched.setdefault(row.template, example)
    missing = [row.template for row in REASONS if row.template not in matched]
    assert not missing, f"rows without an example (or shadowed by an earlier row): {missing}"
    assert all(_first_row(example, TERMS) for example in TERM_EXAMPLES)
    assert {_first_row(example, TERMS).template for example in TERM_EXAMPLES} == {row.template for row in TERMS}


@pytest.mark.parametrize("template", [row.template for row in REASONS + TERMS] + [PREFIXED])
def test_every_row_has_a_chinese_sentence_in_the_compiled_catalogue(template):
    with translation.override("zh-hans"):
        chinese = gettext(template)
    assert chinese != template
    assert CJK.search(chinese) or template == PREFIXED  # "%(prefix)s：%(reason)s" differs by its colon only
    assert sorted(_PLACEHOLDER.findall(chinese)) == sorted(_PLACEHOLDER.findall(template))


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_reads_in_chinese_with_its_values_and_unchanged_in_english(example):
    row = _first_row(example, REASONS)
    values = row.pattern.fullmatch(example).groupdict()
    quoted = " ".join(value for name, value in values.items() if name not in TRANSLATED_PLACEHOLDERS)
    assert_translated(example, data=quoted)
    with translation.override("en"):
        assert translate_reason(example) == example


@pytest.mark.parametrize("example", TERM_EXAMPLES)
def test_every_quoted_phrase_is_translated_inside_its_reason(example):
    reason = f"cannot tell the format ({example}); choose it with --format (lextrace) or on the upload form"
    chinese = in_chinese(reason)
    assert chinese.startswith("无法判断文件格式（") and "）；请用" in chinese
    assert CJK.search(chinese[len("无法判断文件格式（"):chinese.index("）；请用")]), chinese


# --- (c) and (d): what no row knows, and the lines after the first ---------------------------------------------


@pytest.mark.parametrize("text", ["", "something the parsers never said", "a.jsonl: something new",
                                  "unparseable: PdfReadError: EOF marker not found"])
def test_a_reason_no_row_knows_is_shown_as_it_is(text):
    expected = "无法解析：PdfReadError: EOF marker not found" if text.startswith("unparseable") else text
    assert in_chinese(text) == expected


def test_a_file_prefix_is_kept_and_the_following_lines_of_a_diff_survive():
    diff = "--- stored\n+++ uploaded\n@@ -1 +1 @@\n-盗窃公私财物，数额较大的\n+盗窃公私财物，数额巨大的"
    reason = "interpretation fa-1 already exists with a different text:\n" + diff
    assert in_chinese(reason) == "司法解释 fa-1 已存在，但文本不同：\n" + diff
    assert in_chinese("sub/a.txt: pjjg: no verdict: neither pjjg nor a 判决如下 section in qw") == \
        "sub/a.txt：pjjg：没有判决结果：既没有 pjjg，qw 中也没有“判决如下”部分"
    assert in_chinese("d.pdf: unparseable: ValueError: the PDF is password-protected") == \
        "d.pdf：无法解析：ValueError：该 PDF 受密码保护"


# --- (e) the import page ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_import_page_shows_the_reasons_in_the_page_language(personas):
    refused = corpus_import(data=jsonl(statute(264), statute(264)), filename="statutes.jsonl")
    assert refused.status == ImportBatch.Status.FAILED and refused.report["refused"][0]["line"] == 2
    rejected = corpus_import(data=b"no articles here", filename="law.txt",
                             options=ImportOptions(format="statute-txt", law_title="中华人民共和国刑法"))
    assert rejected.errors == [{"line": 0, "reason": "no article (第…条) found"}] and not rejected.report

    def page(batch, language):
        client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE=language)
        return client.get(f"/corpus/imports/{batch.pk}/").content.decode()

    assert "<td>2</td><td><pre>key：与第 1 行重复</pre></td>" in page(refused, "zh-hans")
    assert "<td>2</td><td><pre>key: duplicate of line 1</pre></td>" in page(refused, "en")
    assert "<pre>未找到任何条文（第…条）</pre>" in page(rejected, "zh-hans")
    assert "<pre>no article (第…条) found</pre>" in page(rejected, "en")
    assert refused.report["refused"][0]["reason"] == "key: duplicate of line 1", "the stored report keeps English"
