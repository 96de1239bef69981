"""A9: generic 404/500 pages; no traceback, SQL or case text in the response or the logs."""

import logging

import pytest
from django.conf import settings
from django.test import Client, override_settings

from apps.core.log_redaction import RedactRowData
from tests.cases.conftest import make_case
from tests.security.failing_urls import SENTINEL

pytestmark = pytest.mark.django_db
LEAKS = ("Traceback", "INSERT INTO", "leak_probe", "psycopg", "IntegrityError", "File \"")


@override_settings(ROOT_URLCONF="tests.security.failing_urls", DEBUG=False)
def test_a_failing_view_shows_a_generic_page_and_logs_no_row_data(personas, caplog):
    client = Client(raise_request_exception=False)
    client.force_login(personas.staff_a)
    with caplog.at_level(logging.ERROR, logger="django.request"):
        response = client.get("/boom/")
    assert response.status_code == 500
    html = response.content.decode()
    assert SENTINEL not in html and not any(leak in html for leak in LEAKS)
    assert "Server error" in html or "服务器错误" in html
    assert "script-src 'self'" in response["Content-Security-Policy"]

    records = [r for r in caplog.records if r.name == "django.request"]
    assert records, "the error is logged"
    plain = logging.Formatter()
    # Control: without the filter the database detail would carry the case text into the log.
    assert SENTINEL in plain.formatException(records[0].exc_info)
    for record in records:
        record.exc_text = None
        assert RedactRowData().filter(record)
        assert SENTINEL not in plain.format(record)
    assert "redact_row_data" in settings.LOGGING["handlers"]["console"]["filters"]


def test_another_teams_case_is_a_generic_404_without_its_text(personas):
    case = make_case(personas.staff_a, personas.team_a, title="机密标题-ALPHA")
    response = personas.client(personas.staff_b).get(f"/cases/{case.pk}/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "机密标题-ALPHA" not in html and case.facts[:20] not in html
    assert "Not found" in html or "未找到" in html or "找不到" in html


def test_an_unknown_url_is_the_same_generic_404(personas):
    response = personas.client(personas.staff_a).get("/cases/999999/")
    unknown = personas.client(personas.staff_a).get("/no/such/page/")
    assert response.status_code == unknown.status_code == 404
    assert "Traceback" not in unknown.content.decode() and "urlpatterns" not in unknown.content.decode()
