"""The admin upload page: roles, validation, and a real worker doing the import."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.corpus.models import ArticleVersion, ImportBatch
from tests.conftest import wait_for
from tests.corpus.conftest import jsonl, statute


def upload(client, data: bytes, name="statutes.jsonl", **fields):
    return client.post("/corpus/imports/", {"file": SimpleUploadedFile(name, data), **fields})


@pytest.mark.django_db
def test_only_admins_may_open_or_post_the_upload_page(personas):
    for user in (personas.staff_a, personas.reviewer):
        client = personas.client(user, HTTP_ACCEPT_LANGUAGE="en")
        assert client.get("/corpus/imports/").status_code == 403
        assert upload(client, jsonl(statute())).status_code == 403
    assert ImportBatch.objects.count() == 0
    assert personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en").get("/corpus/imports/").status_code == 200


@pytest.mark.django_db
def test_a_file_of_an_unsupported_type_is_refused_before_it_is_stored(personas):
    response = upload(personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en"), b"MZ\x90\x00binary", name="tool.exe")
    assert response.status_code == 200
    assert "Unsupported file type" in response.content.decode()
    assert ImportBatch.objects.count() == 0


@pytest.mark.django_db
def test_an_oversized_file_is_refused(personas, settings):
    settings.LEXTRACE_MAX_UPLOAD_BYTES = 1024
    response = upload(personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en"), b"{}" * 2000)
    assert "too large" in response.content.decode()
    assert ImportBatch.objects.count() == 0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_upload_is_checked_first_then_published_by_the_worker_and_reported(personas, celery_worker_process):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    response = upload(client, jsonl(statute(264), statute(266, text="诈骗公私财物，数额较大的，处三年以下有期徒刑。")))
    assert response.status_code == 302
    batch = ImportBatch.objects.get()
    assert batch.upload.name.startswith("imports/") and "statutes" not in batch.upload.name
    assert wait_for(lambda: ImportBatch.objects.filter(pk=batch.pk, status="checked").exists(), timeout=60), \
        ImportBatch.objects.get(pk=batch.pk).status
    assert ArticleVersion.objects.count() == 0, "the check is a dry run"
    page = client.get(f"/corpus/imports/{batch.pk}/").content.decode()
    assert "What the import would do" in page and 'id="publish"' in page and "Import queued." not in page
    assert client.get(f"/corpus/imports/{batch.pk}/", HTTP_HX_REQUEST="true").status_code == 286, \
        "polling pauses while the import waits for the admin"

    assert client.post(f"/corpus/imports/{batch.pk}/publish/").status_code == 302
    done = wait_for(lambda: ImportBatch.objects.filter(pk=batch.pk, status="published").exists(), timeout=60)
    assert done, ImportBatch.objects.get(pk=batch.pk).status
    assert ArticleVersion.objects.count() == 2
    published = ImportBatch.objects.get(pk=batch.pk)
    assert published.confirmed_by == personas.admin
    page = client.get(f"/corpus/imports/{batch.pk}/", HTTP_HX_REQUEST="true")
    assert page.status_code == 286, "polling stops once the import has finished"
    assert "added" in page.content.decode() and "Published" in page.content.decode()
    # Publishing twice is refused: the import is no longer waiting for confirmation.
    again = client.post(f"/corpus/imports/{batch.pk}/publish/", follow=True).content.decode()
    assert "no longer waiting for confirmation" in again
    assert ArticleVersion.objects.count() == 2


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_bad_upload_shows_the_line_report_and_its_real_state(personas, celery_worker_process):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    # A JSON error on line 2 beside a well-formed record that is wrong (line 3): both are reported.
    upload(client, jsonl(statute(264)) + b'{"number": NaN}\n' + jsonl(statute(266, text="")))
    batch = ImportBatch.objects.get()
    assert wait_for(lambda: ImportBatch.objects.filter(pk=batch.pk, status="failed").exists(), timeout=60)
    page = client.get(f"/corpus/imports/{batch.pk}/").content.decode()
    assert "Nothing from this file was written" in page
    assert 'id="import-state">failed<' in page and "Import queued." not in page
    lines = {e["line"] for e in ImportBatch.objects.get(pk=batch.pk).errors}
    assert lines == {2, 3}, ImportBatch.objects.get(pk=batch.pk).errors
    assert ArticleVersion.objects.count() == 0
    # What the check found is said in words (not the report's keys), the format it detected is shown, and the
    # way to publish the good line without the others is named.
    assert '<th scope="row">Refused</th><td>2</td>' in page and '<th scope="row">Added</th><td>1</td>' in page
    assert '<span id="import-format">Lextrace JSONL / JSON (statutes)</span>' in page
    assert 'id="import-skip-hint"' in page and "Publish without the refused records" in page
    # The page's poll brings the format too: the page was opened before the check had detected it.
    polled = client.get(f"/corpus/imports/{batch.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert '<span id="import-format" hx-swap-oob="true">Lextrace JSONL / JSON (statutes)</span>' in polled
    chinese = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="zh-hans").get(f"/corpus/imports/{batch.pk}/")
    assert '<th scope="row">被拒</th><td>2</td>' in chinese.content.decode()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_checked_upload_can_be_discarded_and_nothing_is_written(personas, celery_worker_process):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    upload(client, jsonl(statute(264)))
    batch = ImportBatch.objects.get()
    assert wait_for(lambda: ImportBatch.objects.filter(pk=batch.pk, status="checked").exists(), timeout=60)
    client.post(f"/corpus/imports/{batch.pk}/discard/")
    batch.refresh_from_db()
    assert batch.status == "discarded" and not batch.upload
    assert ArticleVersion.objects.count() == 0
    assert client.post(f"/corpus/imports/{batch.pk}/publish/").status_code == 302
    assert ImportBatch.objects.get(pk=batch.pk).status == "discarded"


@pytest.mark.django_db
def test_too_many_fields_or_files_are_refused_before_anything_is_stored(personas):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    fields = {f"f{i}": "x" for i in range(1001)}
    assert client.post("/corpus/imports/", fields).status_code == 400
    files = {f"file{i}": SimpleUploadedFile(f"s{i}.jsonl", b"{}") for i in range(101)}
    assert client.post("/corpus/imports/", files).status_code == 400
    assert ImportBatch.objects.count() == 0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_judgment_upload_shows_its_parsed_outcome_and_is_published_only_once_confirmed(personas, celery_worker_process):
    from apps.corpus.models import Precedent
    from tests.corpus.judgments import judgment

    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    upload(client, judgment().encode(), name="判决书.txt", format="judgment")
    batch = ImportBatch.objects.get()
    assert wait_for(lambda: ImportBatch.objects.filter(pk=batch.pk, status="checked").exists(), timeout=60), \
        ImportBatch.objects.get(pk=batch.pk).errors
    page = client.get(f"/corpus/imports/{batch.pk}/").content.decode()
    assert 'id="parsed-outcomes"' in page and "有期徒刑1年6个月" in page and "拘役5个月" in page
    assert 'id="outcomes-checked"' in page
    refused = client.post(f"/corpus/imports/{batch.pk}/publish/", follow=True).content.decode()
    assert "Tick the box" in refused and ImportBatch.objects.get(pk=batch.pk).status == "checked"
    client.post(f"/corpus/imports/{batch.pk}/publish/", {"outcomes_checked": "yes"})
    assert wait_for(lambda: ImportBatch.objects.filter(pk=batch.pk, status="published").exists(), timeout=60), \
        ImportBatch.objects.get(pk=batch.pk).errors
    assert Precedent.objects.get().outcomes.count() == 2
    assert ImportBatch.objects.get(pk=batch.pk).confirmed_by == personas.admin


@pytest.mark.django_db
def test_the_pages_show_live_progress_and_stop_polling_when_nothing_is_running(personas):
    from django.core.cache import cache

    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    batch = ImportBatch.objects.create(filename="cases.jsonl", sha256="0" * 64, status="running")
    cache.set(f"corpus-import-progress:{batch.pk}", {"done": 300, "total": 1200, "stage": "writing"})
    detail = client.get(f"/corpus/imports/{batch.pk}/", HTTP_HX_REQUEST="true")
    assert detail.status_code == 200 and 'hx-trigger="every 1s"' in detail.content.decode()
    assert "Checking (a dry run: nothing is written): writing" in detail.content.decode()
    assert '<progress max="1200" value="300"' in detail.content.decode()
    rows = client.get("/corpus/imports/?rows=1", HTTP_HX_REQUEST="true")
    assert rows.status_code == 200 and 'hx-trigger="every 2s"' in rows.content.decode()
    ImportBatch.objects.filter(pk=batch.pk).update(status="failed")
    assert client.get("/corpus/imports/?rows=1", HTTP_HX_REQUEST="true").status_code == 286
    assert client.get(f"/corpus/imports/{batch.pk}/", HTTP_HX_REQUEST="true").status_code == 286
