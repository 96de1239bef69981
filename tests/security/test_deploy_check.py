"""A1, the negative control: the same settings with DEBUG on, no HTTPS, an empty ALLOWED_HOSTS and a
weak secret fail `check --deploy --fail-level WARNING`, naming each problem. (The passing run with
production values is tests/legalsite/test_settings.py::test_the_deploy_check_passes_with_production_settings.)"""

import re

from tests.legalsite.test_settings import PROD, run_manage


def test_insecure_settings_fail_the_deploy_check_with_every_expected_warning():
    bad = dict(PROD, DJANGO_DEBUG="1", LEXTRACE_HTTPS="0", DJANGO_ALLOWED_HOSTS="", DJANGO_SECRET_KEY="short")
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **bad)
    assert result.returncode == 1
    found = set(re.findall(r"security\.W0\d\d", result.stdout + result.stderr))
    assert found == {"security.W004", "security.W008", "security.W009", "security.W012", "security.W016",
                     "security.W018", "security.W020"}, found


def test_the_production_values_raise_no_warning_of_any_app():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **PROD)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout + result.stderr
