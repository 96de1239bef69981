"""Shared by the browser tests: `make demo`'s start script on a database of its own, and
Debian's Chromium through Playwright."""

import os
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def demo_server_running(log_path: Path, *, db_name: str, redis_url: str, timeout: float = 300.0):
    """Start scripts/demo.sh (web + worker) on a fresh database; yield its base URL; stop it."""
    port = free_port()
    env = dict(os.environ, LEXTRACE_WEB_PORT=str(port), DB_NAME=db_name, REDIS_URL=redis_url,
               DJANGO_SETTINGS_MODULE="legalsite.settings")
    env.pop("CELERY_BROKER_URL", None)
    subprocess.run(["bash", "scripts/createdb.sh", "--fresh", db_name], cwd=ROOT, env=env, check=True, timeout=60)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"make demo's start script exited with {proc.returncode}; see {log_path}")
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"the demo did not answer /healthz within {timeout:.0f} s")
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@contextmanager
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
