"""A6: every page carries a CSP with a nonce and no unsafe-inline/unsafe-eval for scripts, plus the
other security headers; templates hold no inline script, inline handlers, hx-on or |safe."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template import engines

from tests.test_url_access import ROUTES, concrete

ROOT = Path(__file__).resolve().parents[2]


def script_src(policy: str) -> list[str]:
    for directive in policy.split(";"):
        name, *values = directive.split()
        if name == "script-src":
            return values
    return []


def assert_secure_headers(response, path):
    policy = response["Content-Security-Policy"]
    sources = script_src(policy)
    assert sources, (path, policy)
    assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources, (path, policy)
    assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy, policy
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"


GET_ROUTES = [r for r in ROUTES if "<" not in r and "(?P" not in r and not r.startswith("admin/") and "i18n" not in r]


@pytest.mark.django_db
@pytest.mark.parametrize("route", GET_ROUTES)
def test_every_page_an_admin_opens_has_a_strict_script_policy(personas, route):
    """Every parameterless route (new pages are picked up without listing them) as an admin."""
    path = concrete(route)
    response = personas.client(personas.admin).get(path)
    if response.status_code in (301, 302, 405):
        return
    assert_secure_headers(response, path)
    if response.get("Content-Type", "").startswith("text/html"):
        sources = script_src(response["Content-Security-Policy"])
        for tag in re.findall(rb"<script\b[^>]*>", response.content):
            # A script is a file of ours, or inert data; a nonce it carries is this response's.
            assert b" src=" in tag or b"application/json" in tag, (path, tag)
            nonce = re.search(rb'nonce="([^"]+)"', tag)
            if nonce:
                assert f"'nonce-{nonce.group(1).decode()}'" in sources, (path, tag)


@pytest.mark.django_db
def test_error_pages_and_the_admin_site_have_the_policy_too(personas):
    client = personas.client(personas.admin)
    assert_secure_headers(client.get("/no-such-page/"), "404")
    assert_secure_headers(client.get("/admin/"), "admin")


def template_files():
    dirs = set()
    for engine in engines.all():
        dirs.update(Path(d) for d in engine.template_dirs)
    for directory in sorted(dirs):
        # Ours: the project's templates/ and apps/*/templates, not installed packages under .local/.
        if directory == ROOT / "templates" or (ROOT / "apps") in directory.parents:
            yield from sorted(directory.rglob("*.html"))


TEMPLATES = list(template_files())


def test_the_template_scan_finds_our_templates():
    assert any(p.name == "base.html" for p in TEMPLATES) and len(TEMPLATES) > 20


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_templates_hold_no_inline_script(path):
    text = path.read_text(encoding="utf-8")
    for tag in re.findall(r"<script\b[^>]*>", text):
        assert "src=" in tag or "csp_nonce" in tag or "CSP_NONCE" in tag or "application/json" in tag, tag
    assert not re.search(r"\bhx-on", text), "hx-on evaluates code (allowEval is off)"
    assert not re.search(r"\son[a-z]+\s*=", text), "inline event handler"
    assert "javascript:" not in text.lower()
    assert not re.search(r"\|\s*safe\b|{%\s*autoescape\s+off", text), "autoescaping is never turned off (F6)"


def test_htmx_may_not_eval(personas):
    html = personas.client(personas.staff_a).get("/").content.decode()
    config = re.search(r'<meta name="htmx-config" content=\'([^\']+)\'', html)
    assert config and '"allowEval": false' in config.group(1) and '"allowScriptTags": false' in config.group(1)


def test_the_policy_setting_is_strict():
    directives = settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
    assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
    assert directives["default-src"] == ["'self'"]
