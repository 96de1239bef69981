"""A clerk files a two-defendant case in the browser, watches the run, reads the evidence and
switches to Chinese — against `make demo`'s start script on its own database, through Debian's
Chromium. Screenshots go to test-artifacts/."""

import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.cases.conftest import demo_case
from tests.e2e.test_demo_in_browser import CHROMIUM, CHROMIUM_ARGS, free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _redis_url_of_our_own() -> str:
    # Not the test run's broker database: a worker started by other tests must not take the
    # demo's tasks (and the demo's worker must not take theirs).
    base, _, number = os.environ["REDIS_URL"].rpartition("/")
    return f"{base}/{(int(number or 0) + 10) % 16}"


@pytest.fixture(scope="module")
def demo_server(artifacts_dir):
    port = free_port()
    env = dict(os.environ, LEXTRACE_WEB_PORT=str(port), DB_NAME="lextrace_e2e_cases", REDIS_URL=_redis_url_of_our_own(),
               DJANGO_SETTINGS_MODULE="legalsite.settings")
    env.pop("CELERY_BROKER_URL", None)
    # The Chinese catalog is compiled by scripts/bootstrap.sh; make sure this checkout has it.
    subprocess.run(["python", "manage.py", "compilemessages", "--ignore=.local", "--ignore=node_modules"], cwd=ROOT,
                   env=env, check=True, timeout=120, capture_output=True)
    subprocess.run(["bash", "scripts/createdb.sh", "--fresh", env["DB_NAME"]], cwd=ROOT, env=env, check=True,
                   timeout=60)
    log = open(artifacts_dir / "cases-demo-server.log", "w")
    proc = subprocess.Popen(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"make demo's start script exited with {proc.returncode}; see {log.name}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the demo did not answer /healthz within 300 s")
    yield base
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


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

    # The strategy choice: statistical; the LLM one is disabled with the reason (no server configured).
    assert page.is_checked("input[name=strategy][value=statistical]")
    assert page.is_disabled("input[name=strategy][value=llm]")
    assert "LEXTRACE_LLM_BASE_URL" in page.inner_text("#strategy-note")
    page.click("#start-run-button")

    # Live progress through htmx polling until the worker is done.
    page.wait_for_selector("#run-status")
    assert page.inner_text("#run-strategy").startswith("statistical")
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

    # The verified subgraph is drawn.
    page.locator("#evidence-graph").scroll_into_view_if_needed()
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
    page.click("#case-table a >> nth=0")
    page.click("#run-table a >> nth=0")
    assert page.get_attribute("#run-state", "data-status") == "done"
    page.click("#run-results .evidence-link >> nth=1")
    assert page.inner_text("h1").startswith("Evidence for 赵某")
    page.click("#reasoning a.cite >> nth=0")
    assert "#ev-" in page.url
    assert page.locator("#candidates .checklist").count() >= 1
    assert "The graph view needs JavaScript" in page.inner_text("#graph")
    page.screenshot(path=str(artifacts_dir / "cases-evidence-nojs.png"))
    context.close()
