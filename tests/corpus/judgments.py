"""Judgments written for these tests (invented courts, people and events) and document builders."""

import io
import zipfile

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="xml" ContentType="application/xml"/></Types>'
)


def judgment(*, number="（2019）示0101刑初123号", court="示范市东城区人民法院", facts=None, verdict=None,
             reasoning=None) -> str:
    facts = facts or ("经审理查明：2019年1月5日晚，被告人甲某伙同被告人乙某某在示范市东城区某商场内，趁被害人丙某不备，"
                      "窃取其放在柜台上的手机一部，价值人民币三千二百元。同月8日，二被告人被公安机关抓获，到案后如实供述了上述事实。\n"
                      "上述事实，有被害人陈述、证人证言、价格认定书等证据证实，足以认定。")
    reasoning = reasoning or ("本院认为，被告人甲某、乙某某以非法占有为目的，秘密窃取他人财物，数额较大，其行为均已构成盗窃罪。"
                              "依照《中华人民共和国刑法》第二百六十四条、第二十五条第一款、第六十七条第三款、第七十二条、第五十二条，"
                              "《中华人民共和国刑事诉讼法》第十五条之规定，判决如下：")
    verdict = verdict or ("一、被告人甲某犯盗窃罪，判处有期徒刑一年六个月，并处罚金人民币五千元。\n"
                          "（刑期从判决执行之日起计算。判决执行以前先行羁押的，羁押一日折抵刑期一日，即自2019年1月8日起至2020年7月7日止。）\n"
                          "二、被告人乙某某犯盗窃罪，判处拘役五个月，缓刑六个月，并处罚金人民币2,000元。\n"
                          "三、扣押在案的作案工具予以没收。")
    return (f"{court}\n刑事判决书\n{number}\n公诉机关示范市东城区人民检察院。\n被告人甲某，男，1990年1月1日出生。\n"
            f"被告人乙某某，女，1992年2月2日出生。\n示范市东城区人民检察院以示东检刑诉〔2019〕100号起诉书指控被告人甲某、乙某某犯盗窃罪，"
            f"于2019年3月1日向本院提起公诉。\n{facts}\n{reasoning}\n{verdict}\n"
            "如不服本判决，可在接到判决书的第二日起十日内，通过本院或者直接向示范市中级人民法院提出上诉。\n审判长　某某\n")


def single(verdict_line: str, *, number="（2020）示0102刑初7号", facts=None) -> str:
    """A one-defendant judgment around one verdict line."""
    facts = facts or ("经审理查明：2020年3月2日，被告人丁某在示范市西城区一小区地下车库内，用自带工具撬开他人电动车锁，"
                      "将电动车一辆推走，价值人民币二千五百元。次日丁某被民警抓获。")
    return judgment(number=number, facts=facts, reasoning="本院认为，被告人丁某的行为已构成犯罪。依照《中华人民共和国刑法》第二百六十四条之规定，判决如下：",
                    verdict=verdict_line)


def docx(text: str) -> bytes:
    """A minimal Word document, one paragraph per line of ``text``."""
    from xml.sax.saxutils import escape

    body = "".join(f"<w:p><w:r><w:t>{escape(line)}</w:t></w:r></w:p>" for line in text.splitlines())
    document = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{W_NS}"><w:body>'
                f"{body}</w:body></w:document>").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("word/document.xml", document)
    return buffer.getvalue()


def pdf(text: str) -> bytes:
    """A one-page PDF of ``text`` in a CID font whose ToUnicode map gives each character back."""
    from tests.corpus.test_documents import make_pdf, stream

    chars = sorted(set(text.replace("\n", "")))
    cid = {ch: i + 1 for i, ch in enumerate(chars)}
    content = b"".join(b"BT /F1 9 Tf 20 %d Td <%s> Tj ET\n" % (820 - 11 * n, "".join(f"{cid[c]:04X}" for c in line).encode())
                       for n, line in enumerate(text.splitlines()) if line)
    mapping = "".join(f"<{cid[c]:04X}> <{ord(c):04X}>\n" for c in chars)
    cmap = ("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n/CMapName /Adobe-Identity-UCS def\n"
            "/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
            f"{len(chars)} beginbfchar\n{mapping}endbfchar\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend").encode()

    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        stream(content),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /Identity-H /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>",
        stream(cmap),
    ]
    return make_pdf(objects)
