"""A clerk files a two-defendant case in the browser, watches the run, reads the evidence and
switches to Chinese — against `make demo`'s start script on its own database, through Debian's
Chromium. Screenshots go to test-artifacts/."""

from pathlib import Path

import pytest

from tests.browser_support import chromium
from tests.cases.conftest import demo_case

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def demo_server(demo_site):
    return demo_site


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def log_in(page, base):
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", "clerk_a")
    page.fill("#id_password", "lextrace-demo")
    page.click("button.primary")
    page.wait_for_url(base + "/")


def test_a_clerk_files_a_case_watches_the_run_and_follows_the_evidence(demo_server, browser, artifacts_dir):
    shots = artifacts_dir
    record = demo_case("demo-case-001")
    page = browser.new_page(locale="en-US", viewport={"width": 1280, "height": 900})
    log_in(page, demo_server)

    # Intake: the facts come from an uploaded TXT, shown for confirmation before anything is saved.
    page.click("nav.mainnav >> text=Cases")
    page.click("#new-case")
    page.select_option("#id_team", label="Team A · 刑事一庭")
    page.fill("#id_title", "王某、赵某盗窃、诈骗案")
    page.fill("#id_offence_date", "2018-09-14")
    page.fill("#id_defendants", "王某\n赵某")
    page.set_input_files("#id_file", files=[{"name": "起诉书.txt", "mimeType": "text/plain",
                                             "buffer": record["fact"].encode("utf-8")}])
    page.click("#save-case")
    page.wait_for_selector("#upload-confirm")
    assert "撬开入户门锁" in page.input_value("#id_facts")
    page.screenshot(path=str(shots / "cases-intake-confirm.png"), full_page=True)
    page.click("#save-case")
    page.wait_for_selector("#start-run")
    assert page.inner_text("#defendants") == "王某、赵某"

    # A clerk chooses no research option: the run is the full pipeline.
    assert page.locator("input[name=strategy]").count() == 0 and "LEXTRACE_LLM_BASE_URL" not in page.inner_text("main")
    page.click("#start-run-button")

    # Live progress through htmx polling until the worker is done.
    page.wait_for_selector("#run-status")
    assert page.text_content("#run-strategy").startswith("statistical")
    page.wait_for_selector("#run-state[data-status=running], #run-state[data-status=done]", timeout=60000)
    page.screenshot(path=str(shots / "cases-run-progress.png"), full_page=True)
    page.wait_for_selector("#run-state[data-status=done]", timeout=180000)
    results = page.inner_text("#run-results")
    assert "王某" in results and "赵某" in results
    page.screenshot(path=str(shots / "cases-run-done.png"), full_page=True)

    # The evidence of the first defendant.
    page.click("#run-results .evidence-link >> nth=0")
    page.wait_for_selector("#evidence")
    assert page.inner_text("h1").startswith("Evidence for 王某")
    page.screenshot(path=str(shots / "cases-evidence.png"))
    status = page.get_attribute("#judgment-status", "class")
    assert "status-judged" in status, page.inner_text("#judgment")

    # A citation leads to its evidence item, which leads to the article text in force.
    # (The statistical reasoning cites the first verified article first: "依照第…条[1]".)
    page.click("#reasoning a.cite >> nth=0")
    assert page.url.endswith("#ev-1")
    item = page.locator("#ev-1")
    target = item.locator("a.evidence-target").get_attribute("href")
    assert item.is_visible() and target.startswith("#art-"), item.inner_text()
    item.locator("a.evidence-target").click()
    assert page.url.endswith(target)
    article = page.locator(target)
    label = article.locator("h3").inner_text().split()[0]
    assert article.is_visible() and label in item.inner_text()
    text = article.locator(".article-text").inner_text()
    assert text and text[:30] in item.inner_text()
    page.screenshot(path=str(shots / "cases-evidence-article.png"))

    # The verified subgraph is fetched (htmx) once it scrolls into view, then drawn.
    page.locator("#graph").scroll_into_view_if_needed()
    page.wait_for_selector("#evidence-graph canvas", timeout=30000)
    page.locator("#graph").screenshot(path=str(shots / "cases-evidence-graph.png"))

    # Switch the interface to Chinese on the same page.
    page.select_option("#lang-select", "zh-hans")
    page.click("form.lang button")
    page.wait_for_selector("html[lang=zh-hans]")
    assert "王某的证据" in page.inner_text("h1")
    assert "裁判结果" in page.inner_text("#judgment") and "经核验的证据" in page.inner_text("#judgment")
    assert "案件" in page.inner_text("nav.mainnav")
    page.goto(page.url.split("#")[0])
    page.screenshot(path=str(shots / "cases-evidence-zh.png"))
    page.close()


def test_the_evidence_view_works_without_javascript(demo_server, browser, artifacts_dir):
    context = browser.new_context(java_script_enabled=False, locale="en-US")
    page = context.new_page()
    log_in(page, demo_server)
    page.goto(demo_server + "/cases/")
    for link in ("#case-table a >> nth=0", "#run-table a >> nth=0"):
        with page.expect_navigation():  # read the next page, never the one being left
            page.click(link)
    assert page.get_attribute("#run-state", "data-status") == "done"
    with page.expect_navigation():
        page.click("#run-results .evidence-link >> nth=1")
    assert page.inner_text("h1").startswith("Evidence for 赵某")
    page.click("#reasoning a.cite >> nth=0")
    assert "#ev-" in page.url
    assert page.locator("#candidates .checklist").count() >= 1
    assert "The graph view needs JavaScript" in page.inner_text("#graph")
    page.screenshot(path=str(artifacts_dir / "cases-evidence-nojs.png"))
    context.close()
