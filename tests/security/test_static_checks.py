"""J1 bandit, J2 pip-audit (strict; skipped, never passed, when the advisory service cannot be
reached) and missing migrations (makemigrations --check)."""

import json
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_bandit_finds_nothing_medium_or_high_beyond_the_reviewed_waivers():
    result = subprocess.run([str(BIN / "bandit"), "-r", "apps", "worker", "legalsite", "training", "lexlib", "-ll", "-q",
                             "-f", "json"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    report = json.loads(result.stdout)
    assert not report["errors"], report["errors"]
    found = Counter((r["filename"].removeprefix("./"), r["test_id"]) for r in report["results"])
    waivers = tomllib.loads((ROOT / "bandit-waivers.toml").read_text())["waiver"]
    assert all(w["reason"].strip() for w in waivers)

    def allowed(key):
        path, test = key
        return max([w["count"] for w in waivers if w["test"] == test and fnmatch(path, w["file"])], default=0)

    unwaived = {key: n for key, n in found.items() if n > allowed(key)}
    details = [f"{r['filename']}:{r['line_number']} {r['test_id']} {r['issue_text']}" for r in report["results"]
               if (r["filename"].removeprefix("./"), r["test_id"]) in unwaived]
    assert not unwaived, "new bandit findings (fix them, or add a reviewed waiver):\n" + "\n".join(details)


def test_no_model_change_lacks_a_migration():
    result = subprocess.run([sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"], cwd=ROOT,
                            env=os.environ, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


# pip-audit's lookups go to PyPI's JSON API. Without --strict a run that audited nothing exits 0
# ("could not be audited"); with --strict it exits 1, and we then tell a failed lookup from a
# found vulnerability by the output.
UNREACHABLE = ("ConnectionError", "Max retries exceeded", "Failed to establish", "NameResolutionError",
               "Temporary failure in name resolution", "timed out", "could not be audited", "ServiceError")


def test_pip_audit_strict_finds_no_known_vulnerability():
    # What production installs: every distribution of the hashed lock; --no-deps audits exactly these.
    reqs = ["-r", "requirements.lock"]
    try:
        result = subprocess.run([str(BIN / "pip-audit"), "--strict", "--no-deps", "--progress-spinner", "off",
                                 "--format", "json", *reqs], cwd=ROOT, capture_output=True, text=True, check=False,
                                timeout=float(os.environ.get("LEXTRACE_PIP_AUDIT_TIMEOUT", "300")))
    except subprocess.TimeoutExpired:
        pytest.skip("pip-audit: the advisory service did not answer in time; NOT audited")
    if result.returncode == 0:
        report = json.loads(result.stdout)
        assert report["dependencies"], "pip-audit audited nothing"
        assert not [d for d in report["dependencies"] if d.get("vulns")]
        return
    vulnerable = []
    if result.stdout.strip().startswith("{"):
        vulnerable = [d for d in json.loads(result.stdout)["dependencies"] if d.get("vulns")]
    assert not vulnerable, json.dumps(vulnerable, indent=1)
    if any(marker in result.stderr for marker in UNREACHABLE):
        pytest.skip("pip-audit --strict could not reach the advisory service; NOT audited: "
                    + result.stderr.strip().splitlines()[-1][:300])
    pytest.fail(f"pip-audit --strict exited {result.returncode}: {result.stderr[-2000:]}")


SCANNED = re.compile(r"\.(py|sh|toml|txt|md|html|js|cfg|ini|yml|yaml|env)$|(^|/)(Makefile|Procfile)$")


def test_no_secret_in_the_repository_beyond_the_reviewed_baseline():
    """J4: detect-secrets over the tracked source files; every finding must be in .secrets.baseline
    (reviewed: demo and test passwords). Refresh it with the command in docs/RELIABILITY.md."""
    files = [f for f in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                       check=True).stdout.split("\n")
             if SCANNED.search(f) and not f.startswith("static/vendor/") and (ROOT / f).is_file()]
    result = subprocess.run([str(BIN / "detect-secrets"), "scan", "--no-verify", *files], cwd=ROOT,
                            capture_output=True, text=True, timeout=600, check=False)
    # Test fixtures' passwords ("Secret Keyword" under tests/) are fake by construction; every other
    # kind of finding there (keys, tokens, high-entropy strings) still counts.
    found = {(name, s["hashed_secret"]) for name, secrets in json.loads(result.stdout)["results"].items()
             for s in secrets if not (name.startswith("tests/") and s["type"] == "Secret Keyword")}
    baseline = json.loads((ROOT / ".secrets.baseline").read_text())["results"]
    reviewed = {(name, s["hashed_secret"]) for name, secrets in baseline.items() for s in secrets}
    assert found <= reviewed, f"unreviewed secrets: {sorted(found - reviewed)}"


def test_an_sbom_of_the_production_requirements_names_every_pinned_package(tmp_path):
    """J5: CycloneDX SBOM of requirements.txt (what production installs), offline."""
    out = tmp_path / "sbom.json"
    subprocess.run([str(BIN / "cyclonedx-py"), "requirements", "requirements.txt", "--of", "JSON", "-o", str(out)],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    sbom = json.loads(out.read_text())
    components = {(c["name"].lower().replace("_", "-"), c.get("version")) for c in sbom["components"]}
    pins = {tuple(re.split(r"\[[^\]]*\]==|==", line.strip(), maxsplit=1))
            for line in (ROOT / "requirements.txt").read_text().splitlines()
            if "==" in line and not line.lstrip().startswith("#")}
    pins = {(name.lower().replace("_", "-"), version) for name, version in pins}
    assert sbom["bomFormat"] == "CycloneDX" and pins and pins <= components, pins - components


# --- J3: pinned and hashed lock files --------------------------------------------------------

LOCKS = {"requirements.txt": "requirements.lock", "requirements-dev.txt": "requirements-dev.lock"}


def _lock_pins(lock: Path) -> dict[str, tuple[str, list[str]]]:
    text = lock.read_text().replace("\\\n", " ")
    pins = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        spec, *options = line.split()
        name, _, version = spec.partition("==")
        assert version, f"{lock.name}: {spec} is not pinned with =="
        hashes = [o.split("=", 1)[1] for o in options if o.startswith("--hash=")]
        assert hashes and all(h.startswith("sha256:") and len(h) == 71 for h in hashes), f"{lock.name}: {spec} unhashed"
        pins[name.lower().replace("_", "-")] = (version, hashes)
    return pins


def _direct_pins(requirements: Path) -> dict[str, str]:
    pins = {}
    for line in requirements.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            pins.update(_direct_pins(requirements.parent / line[3:].strip()))
            continue
        name, _, version = line.partition("==")
        pins[name.split("[", 1)[0].strip().lower().replace("_", "-")] = version.strip()
    return pins


@pytest.mark.parametrize("source", sorted(LOCKS))
def test_the_lock_pins_and_hashes_every_distribution_and_agrees_with_the_requirements(source):
    locked = _lock_pins(ROOT / LOCKS[source])
    for name, version in _direct_pins(ROOT / source).items():
        assert name in locked, f"{name} is in {source} but not in {LOCKS[source]}: run scripts/lock.py"
        assert locked[name][0].split("+")[0] == version, f"{name}: {source} says {version}, the lock {locked[name][0]}"
    # The runtime lock is part of the development one, version for version.
    runtime, dev = _lock_pins(ROOT / "requirements.lock"), _lock_pins(ROOT / "requirements-dev.lock")
    assert {n: v for n, (v, _h) in runtime.items()} == {n: dev[n][0] for n in runtime}


def test_bootstrap_installs_the_lock_with_hashes_required_and_nothing_else():
    script = (ROOT / "scripts" / "bootstrap.sh").read_text()
    assert "--require-hashes --no-deps" in script and "requirements-dev.lock" in script
    assert "-r \"$reqs\"" not in script


def test_the_environment_is_the_development_lock():
    from importlib.metadata import distributions

    installed = {d.metadata["Name"].lower().replace("_", "-"): d.version for d in distributions()}
    locked = _lock_pins(ROOT / "requirements-dev.lock")
    different = {n: (v, installed.get(n)) for n, (v, _h) in locked.items() if installed.get(n) != v}
    assert not different, f"installed versions differ from requirements-dev.lock: {different}"
