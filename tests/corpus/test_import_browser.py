"""An admin uploads corpus files in Chromium and watches each one's real state arrive by htmx
polling: a broken file ends "failed" with its line report (never a stale "Import queued."), a
judgment is checked and its parsed outcome shown for confirmation. Nothing is published here, so
the shared demo database the other browser tests use is not changed. Screenshots: test-artifacts/."""

import pytest

from tests.browser_support import chromium
from tests.corpus.judgments import judgment

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def test_an_admin_sees_each_upload_checked_live_and_confirms_or_discards_it(demo_site, browser, artifacts_dir):
    page = browser.new_page(locale="en-US", viewport={"width": 1280, "height": 1000})
    page.goto(demo_site + "/accounts/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "lextrace-demo")
    page.click("button.primary")
    page.wait_for_url(demo_site + "/")

    page.goto(demo_site + "/corpus/imports/")
    assert "Statistical models" in page.inner_text("#freshness")
    page.set_input_files("#id_file", files=[{"name": "cases.jsonl", "mimeType": "application/json",
                                             "buffer": b'{"id": "x", "fact": NaN}\n'}])
    page.click("#upload")
    page.wait_for_selector("#import-state")
    page.wait_for_selector(".status-failed#import-state", timeout=60000)
    assert "Nothing from this file was written" in page.inner_text("#import-status")
    assert "Import queued." not in page.content()
    page.screenshot(path=str(artifacts_dir / "corpus-import-failed.png"), full_page=True)

    page.goto(demo_site + "/corpus/imports/")
    page.select_option("#id_format", "judgment")
    page.set_input_files("#id_file", files=[{"name": "判决书.txt", "mimeType": "text/plain",
                                             "buffer": judgment().encode("utf-8")}])
    page.click("#upload")
    page.wait_for_selector(".status-checked#import-state", timeout=60000)
    outcomes = page.inner_text("#parsed-outcomes")
    assert "甲某" in outcomes and "有期徒刑1年6个月" in outcomes and "拘役5个月" in outcomes
    assert page.is_visible("#outcomes-checked") and page.is_visible("#publish")
    page.screenshot(path=str(artifacts_dir / "corpus-import-judgment-checked.png"), full_page=True)
    page.click("#discard")
    page.wait_for_selector(".status-discarded#import-state")

    page.goto(demo_site + "/models/")
    page.wait_for_selector("#models-freshness")
    page.screenshot(path=str(artifacts_dir / "models-freshness.png"), full_page=True)
    page.close()
