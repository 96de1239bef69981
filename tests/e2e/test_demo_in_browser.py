"""As a new user would: `make demo`'s start script brings up Lextrace, and a
demo user logs in through Debian's Chromium."""

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def demo_server(artifacts_dir):
    port = free_port()
    env = dict(
        os.environ,
        LEXTRACE_WEB_PORT=str(port),
        DB_NAME="lextrace_e2e",
        REDIS_URL=os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/2",
        DJANGO_SETTINGS_MODULE="legalsite.settings",
    )
    subprocess.run(["bash", "scripts/createdb.sh", "--fresh", env["DB_NAME"]], cwd=ROOT, env=env, check=True, timeout=60)
    log = open(artifacts_dir / "demo-server.log", "w")
    proc = subprocess.Popen(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
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
        pytest.fail("the demo did not answer /healthz within 180 s")
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


@pytest.mark.browser
@pytest.mark.slow
def test_a_demo_user_logs_in_and_sees_the_home_page(demo_server, browser, artifacts_dir):
    page = browser.new_page(locale="zh-CN")
    page.goto(demo_server + "/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", "clerk_a")
    page.fill("#id_password", "lextrace-demo")
    page.click("button.primary")
    page.wait_for_url(demo_server + "/")
    assert "clerk_a" in page.inner_text("header")
    assert "Team A" in page.inner_text("main")
    page.screenshot(path=str(artifacts_dir / "demo-home.png"), full_page=True)

    page.goto(demo_server + "/health/")
    page.click("#ping-worker")
    page.wait_for_selector(".ping .ok", timeout=60000)
    page.screenshot(path=str(artifacts_dir / "demo-health.png"), full_page=True)

    # The demo corpus is loaded and its graph built: the explorer draws an article's neighbourhood.
    page.goto(demo_server + "/graph/explore/?q=264")
    assert "盗窃罪" in page.inner_text("#neighbours")
    page.wait_for_selector("#cy canvas", timeout=30000)
    page.screenshot(path=str(artifacts_dir / "demo-graph-explorer.png"), full_page=True)
    page.goto(demo_server + "/graph/")
    assert "consistent" in page.inner_text("main")
    page.close()


@pytest.mark.browser
@pytest.mark.slow
def test_a_wrong_password_is_refused_with_a_clear_message(demo_server, browser):
    page = browser.new_page()
    page.goto(demo_server + "/accounts/login/")
    page.fill("#id_username", "clerk_a")
    page.fill("#id_password", "wrong-password")
    page.click("button.primary")
    assert "/accounts/login/" in page.url
    assert page.locator("[role=alert]").count() == 1
    page.close()
