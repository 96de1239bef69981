"""G1: refused uploads leave nothing behind: a file spooled to disk (over FILE_UPLOAD_MAX_MEMORY_SIZE)
and then refused for its size or type is gone from FILE_UPLOAD_TEMP_DIR, and nothing reaches MEDIA_ROOT."""

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.cases.models import CaseUpload
from apps.corpus.models import ImportBatch

pytestmark = pytest.mark.django_db
BIG = settings.FILE_UPLOAD_MAX_MEMORY_SIZE + 512 * 1024  # spooled to a temporary file


def files_under(path):
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


@pytest.fixture
def dirs(settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    settings.MEDIA_ROOT = tmp_path / "media"
    (tmp_path / "upload-tmp").mkdir()
    return tmp_path / "upload-tmp", tmp_path / "media"


def test_an_oversized_statute_file_leaves_no_temporary_or_stored_file(personas, settings, dirs):
    temp, media = dirs
    settings.LEXTRACE_MAX_UPLOAD_BYTES = 1024 * 1024
    response = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en").post(
        "/corpus/imports/", {"file": SimpleUploadedFile("statutes.jsonl", b"{}\n" * (BIG // 3))})
    assert response.status_code == 200 and "too large" in response.content.decode()
    assert files_under(temp) == [] and files_under(media) == [] and not ImportBatch.objects.exists()


def test_a_spoofed_facts_document_leaves_no_temporary_or_stored_file(personas, dirs):
    temp, media = dirs
    exe = b"MZ\x90\x00" + b"\x00" * BIG
    response = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en").post("/cases/new/", {
        "team": personas.team_a.pk, "title": "t", "offence_date": "2020-01-01", "defendants": "甲",
        "file": SimpleUploadedFile("起诉书.pdf", exe, content_type="application/pdf")})
    assert response.status_code in (200, 400)
    assert files_under(temp) == [] and files_under(media) == [] and not CaseUpload.objects.exists()
