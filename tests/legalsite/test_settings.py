import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from legalsite import env

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args, **env_overrides):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LEXTRACE_", "CELERY_"))}
    base.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )


PROD = {
    "DJANGO_SETTINGS_MODULE": "legalsite.settings",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
    "DJANGO_DEBUG": "0",
    "DJANGO_ALLOWED_HOSTS": "lextrace.example.org",
    "LEXTRACE_HTTPS": "1",
}


def test_the_deploy_check_passes_with_production_settings():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **PROD)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_deploy_check_fails_with_debug_on():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **dict(PROD, DJANGO_DEBUG="1"))
    assert result.returncode != 0
    assert "DEBUG" in result.stderr + result.stdout


def test_the_deploy_check_fails_without_https():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **dict(PROD, LEXTRACE_HTTPS="0"))
    assert result.returncode != 0


@pytest.mark.parametrize(
    "overrides, variable",
    [
        ({"DB_PORT": "fifty"}, "DB_PORT"),
        ({"DJANGO_DEBUG": "maybe"}, "DJANGO_DEBUG"),
        ({"DJANGO_SECRET_KEY": ""}, "DJANGO_SECRET_KEY"),
        ({"CELERY_TASK_TIME_LIMIT": "4000", "CELERY_VISIBILITY_TIMEOUT": "3600"}, "CELERY_TASK_TIME_LIMIT"),
    ],
)
def test_a_malformed_variable_stops_start_up_naming_it(overrides, variable):
    result = run_manage("check", **dict(PROD, **overrides))
    assert result.returncode != 0
    assert variable in result.stderr


def test_a_missing_secret_key_stops_start_up_naming_it():
    prod = dict(PROD)
    del prod["DJANGO_SECRET_KEY"]
    result = run_manage("check", **prod)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY is required" in result.stderr


class TestEnvReaders:
    def test_it_reads_typed_values(self, monkeypatch):
        monkeypatch.setenv("X_INT", " 42 ")
        monkeypatch.setenv("X_BOOL", "Yes")
        monkeypatch.setenv("X_LIST", "a, b,,c")
        assert env.env_int("X_INT") == 42
        assert env.env_bool("X_BOOL") is True
        assert env.env_list("X_LIST") == ["a", "b", "c"]

    def test_it_uses_defaults_only_when_unset(self, monkeypatch):
        monkeypatch.delenv("X_UNSET", raising=False)
        assert env.env_int("X_UNSET", 7) == 7
        with pytest.raises(ImproperlyConfigured, match="X_UNSET is required"):
            env.env_str("X_UNSET")

    def test_it_reads_a_secret_from_a_file(self, monkeypatch, tmp_path):
        secret = tmp_path / "s"
        secret.write_text("from-file\n")
        monkeypatch.setenv("X_SECRET_FILE", str(secret))
        assert env.env_str("X_SECRET") == "from-file"
        monkeypatch.setenv("X_SECRET_FILE", str(tmp_path / "missing"))
        with pytest.raises(ImproperlyConfigured, match="X_SECRET_FILE"):
            env.env_str("X_SECRET")

    def test_it_enforces_bounds(self, monkeypatch):
        monkeypatch.setenv("X_PORT", "70000")
        with pytest.raises(ImproperlyConfigured, match="X_PORT must be <= 65535"):
            env.env_int("X_PORT", maximum=65535)
