"""Everything that reads an evidence bundle reads typed objects: a stored bundle is read once with
``Bundle.from_dict`` (worker/agents/types.py) and then through attributes, never indexed as a dict."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLE_MODULE = ROOT / "worker" / "agents" / "types.py"
# bundle.get(…), bundle[…], bundles[0].get(…), (result.bundle or {}).get(…), and the same on any name
# ending in "bundle" (result.bundle, whatif.bundle); templates: {{ x.bundle.defendant }}.
DICT_READ = re.compile(r"bundle(?:\.get\(|\[)|bundles\[[^\]]*\]\.get\(|bundle or \{\}\)\.get\(")
TEMPLATE_READ = re.compile(r"\bbundle\.[a-z_]")


def _offences(paths, pattern) -> list[str]:
    found = []
    for path in paths:
        if path == BUNDLE_MODULE:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_no_dict_reads_of_a_bundle_outside_its_module():
    code = [p for folder in ("apps", "worker", "training", "scripts") for p in sorted((ROOT / folder).rglob("*.py"))
            if "migrations" not in p.parts]
    assert len(code) > 100
    found = _offences(code, DICT_READ)
    assert not found, "read the typed Bundle (Bundle.from_dict once, then attributes):\n" + "\n".join(found)


def test_no_template_reads_a_stored_bundle():
    """Templates read the view-model (apps/cases/evidence.py evidence_context), not the stored bundle."""
    found = _offences(sorted((ROOT / "templates").rglob("*.html")), TEMPLATE_READ)
    assert not found, "\n".join(found)


def test_the_check_finds_what_it_forbids():
    for line in ('x = bundle.get("audit")', 'bundle["judgment"]', 'result.bundle["research"]',
                 'first.bundles[0].get("versions", {})', '(result.bundle or {}).get("audit")'):
        assert DICT_READ.search(line), line
    for line in ("Bundle.from_dict(stored)", "bundle.audit.articles", "bundle_diff(a, b)", "r.bundle for r in results"):
        assert not DICT_READ.search(line), line
    assert TEMPLATE_READ.search("{{ item.bundle.defendant }}") and not TEMPLATE_READ.search("Bundle.to_dict()")
