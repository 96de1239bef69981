"""The README commands' scripts report bad situations instead of hiding them."""

import os
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_make_demo_reports_a_web_port_that_is_already_taken():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        env = dict(os.environ, LEXTRACE_WEB_PORT=str(port))
        result = subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert f"port {port} is already in use" in result.stderr
    assert "LEXTRACE_WEB_PORT" in result.stderr


def test_services_status_reports_the_running_services():
    result = subprocess.run(["bash", "scripts/services.sh", "status"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "postgresql: running" in result.stdout and "redis: running" in result.stdout


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme and "make demo" in readme
    assert "make test" in ci


def test_llm_start_reports_a_port_that_is_already_taken():
    # Checked before anything is installed or loaded, so this needs neither llama-cpp-python nor a model.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        env = dict(os.environ, LEXTRACE_LLM_PORT=str(port))
        result = subprocess.run(["bash", "scripts/llm.sh", "start", "0.5b"], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=60)
    assert result.returncode != 0
    assert f"port {port} is already in use" in result.stderr and "LEXTRACE_LLM_PORT" in result.stderr


def test_llm_script_rejects_an_unknown_model_and_stop_without_a_server_is_harmless():
    result = subprocess.run(["bash", "scripts/llm.sh", "start", "7b"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "unknown model '7b'" in result.stderr
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, LEXTRACE_LLM_PORT=str(port))
    result = subprocess.run(["bash", "scripts/llm.sh", "stop"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "no server of ours" in result.stderr
