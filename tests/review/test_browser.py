"""A clerk files a case and runs it; a reviewer opens it from the queue, overrides a checklist verdict
(the Adjudicator runs again and the what-if shows beside the original), approves it with a reason and
downloads the memo — in Debian's Chromium against `make demo`'s start script. Screenshots go to
test-artifacts/."""

import re

import pytest

from tests.browser_support import chromium
from tests.cases.conftest import demo_case

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def log_in(page, base, username):
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "lextrace-demo")
    with page.expect_navigation():
        page.click("button.primary")
    assert "/accounts/login/" not in page.url, page.inner_text("main")


def file_and_run_a_case(page, base) -> int:
    record = demo_case("demo-case-002")
    page.goto(base + "/cases/new/")
    page.select_option("#id_team", label="Team A · 刑事一庭")
    page.fill("#id_title", "review-browser-marker")
    page.fill("#id_offence_date", "2018-09-14")
    page.fill("#id_defendants", "\n".join(record["defendants"]))
    page.fill("#id_facts", record["fact"])
    with page.expect_navigation():
        page.click("#save-case")
    page.wait_for_selector("#start-run-button")
    with page.expect_navigation():
        page.click("#start-run-button")
    page.wait_for_selector("#run-state[data-status=done]", timeout=180000)
    return int(re.search(r"/runs/(\d+)/", page.url).group(1))


def test_a_reviewer_overrides_a_checklist_verdict_and_approves(demo_site, browser, artifacts_dir):
    clerk = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    page = clerk.new_page()
    log_in(page, demo_site, "clerk_a")
    run_pk = file_and_run_a_case(page, demo_site)
    # The clerk has no review pages.
    assert page.goto(demo_site + f"/review/runs/{run_pk}/").status == 403
    clerk.close()

    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    log_in(page, demo_site, "reviewer")
    with page.expect_navigation():
        page.click("nav.mainnav >> text=Review")
    row = page.locator("#review-queue tr", has_text="review-browser-marker")
    assert "awaiting review" in row.inner_text()
    page.screenshot(path=str(artifacts_dir / "review-queue.png"), full_page=True)
    with page.expect_navigation():
        row.locator(f"a[href='/review/runs/{run_pk}/']").click()
    assert page.inner_text("#review-status") == "awaiting review"
    original = page.inner_text("#original-outcome")

    # Override the first "not shown" checklist verdict of a verified article: the element is shown.
    # The override is an htmx request: the control, the what-if and the coverage change in place.
    page.evaluate("window.__sameDocument = true")  # gone if anything below reloads the page
    control = page.locator("#candidates article.passed table.checklist td.verdict-no .review-control").first
    verdict_anchor = control.locator("xpath=ancestor::tr").get_attribute("id")
    control.locator("summary").click()
    control.locator("textarea[name=reason]").fill("The record does not show this element; see the witness statement.")
    control.locator("details.override button[type=submit]").click()
    page.wait_for_selector(f"#{verdict_anchor} .review-control[data-state=override]")
    assert "The record does not show this element" in page.inner_text("#override-list")
    whatif = page.inner_text("#whatif-outcome")
    assert "No override yet" not in whatif and "could not be computed" not in whatif
    # The reviewer found an element the Auditor had not: it never defeats the article, so the
    # what-if still judges.
    assert "judged" in whatif
    assert page.inner_text("#original-outcome") == original, "the run's own outcome stays as it was"
    page.locator("#whatif").screenshot(path=str(artifacts_dir / "review-whatif.png"))

    # Accept one evidence item (in place), then the rest of each defendant's verified articles, then approve.
    page.locator("#evidence-items .review-control button.review-accept").first.click()
    page.wait_for_selector("#evidence-items .review-control[data-state=accept]")
    assert page.evaluate("window.__sameDocument === true"), "accept and override swap fragments, no page reload"
    for position in (0, 1):
        page.goto(f"{demo_site}/review/runs/{run_pk}/?d={position}")
        # The page posts the opening of the judgment it shows (htmx on load; a GET writes nothing).
        if page.locator(f"#coverage-table tr[data-position='{position}']").count():  # a defendant at this position
            page.wait_for_selector(f"#coverage-table tr[data-position='{position}'] td[data-opened='1']")
        rest = page.locator(f"button[data-accept-rest='{position}']")
        if rest.count():
            with page.expect_navigation():
                rest.click()
    assert page.get_attribute("#coverage-state", "data-complete") == "1"
    page.check("#decision-form input[name=kind][value=approve]")
    page.fill("#decision-form textarea[name=reason]", "Checked every item; the override stands.")
    with page.expect_navigation():
        page.click("#decision-form button[type=submit]")
    assert page.inner_text("#review-status") == "approved"
    assert re.fullmatch(r"[0-9a-f]{64}", page.text_content("#snapshot-hash"))
    assert "reviewer" in page.inner_text("#decision-history")
    page.screenshot(path=str(artifacts_dir / "review-approved.png"), full_page=True)

    with page.expect_download() as download:
        page.click("#approval >> text=Memo (DOCX)")
    assert download.value.suggested_filename == f"lextrace-run-{run_pk}-memo.docx"
    context.close()
