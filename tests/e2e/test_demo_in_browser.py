"""As a new user would: `make demo`'s start script brings up Lextrace, and a
demo user logs in through Debian's Chromium."""

import os

import pytest

from tests.browser_support import chromium, demo_server_running


@pytest.fixture(scope="module")
def demo_server(artifacts_dir):
    redis_url = os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/2"
    with demo_server_running(artifacts_dir / "demo-server.log", db_name="lextrace_e2e", redis_url=redis_url,
                             timeout=180) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


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
    assert "一致" in page.inner_text("main")  # "consistent", in the Chinese UI the page was asked for
    page.close()


@pytest.mark.browser
@pytest.mark.slow
def test_a_wrong_password_is_refused_with_a_clear_message(demo_server, browser):
    page = browser.new_page()
    page.goto(demo_server + "/accounts/login/")
    page.fill("#id_username", "clerk_a")
    page.fill("#id_password", "wrong-password")
    with page.expect_navigation():  # the refused POST renders the login page again
        page.click("button.primary")
    page.locator("[role=alert]").wait_for(timeout=10_000)
    assert "/accounts/login/" in page.url
    assert page.locator("[role=alert]").count() == 1
    page.close()
