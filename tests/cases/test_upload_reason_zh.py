"""A facts document the parser cannot read: the clerk reads the parser's reason in the page language.

lexlib writes the reason in English; apps/cases/services/uploads.py translates it with
apps.corpus.reasons.translate_reason inside the translated sentence "The file could not be read: …".
"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.cases.models import Case, CaseUpload
from tests.cases.conftest import demo_case

pytestmark = pytest.mark.django_db

EXE = b"MZ\x90\x00\x03" + b"\x00" * 200
NUL = "甲某盗窃\x00\x00案".encode() * 20

CASES = [
    ("facts.pdf", EXE, "zh-hans", "无法读取该文件：文件内容是 Windows 可执行文件，不是 TXT、DOCX 或 PDF"),
    ("facts.pdf", EXE, "en",
     "The file could not be read: the content is a Windows executable, not TXT, DOCX or PDF"),
    ("facts.txt", NUL, "zh-hans", "无法读取该文件：内容为二进制数据（含 NUL 字节）；请上传纯文本、DOCX 或 PDF 文件"),
    ("facts.txt", NUL, "en",
     "The file could not be read: binary content (NUL bytes); upload plain text, DOCX or PDF"),
]


@pytest.mark.parametrize(("name", "data", "language", "expected"), CASES)
def test_the_reason_a_file_is_refused_is_in_the_page_language(personas, name, data, language, expected):
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE=language)
    form = {"team": personas.team_a.pk, "title": "", "offence_date": "2018-09-14", "defendants": "王某", "facts": "",
            "file": SimpleUploadedFile(name, data, content_type="application/octet-stream")}
    response = client.post("/cases/new/", form)
    assert response.status_code == 200
    assert expected in response.content.decode()
    assert not CaseUpload.objects.exists() and not Case.objects.exists()


def test_the_demo_facts_still_upload(personas):
    """The translation only touches the refusal: a readable file is still kept for confirmation."""
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="zh-hans")
    facts = demo_case()["fact"]
    form = {"team": personas.team_a.pk, "title": "", "offence_date": "2018-09-14", "defendants": "王某", "facts": "",
            "file": SimpleUploadedFile("起诉书.txt", facts.encode(), content_type="text/plain")}
    assert client.post("/cases/new/", form).status_code == 200
    assert CaseUpload.objects.get().text == facts
