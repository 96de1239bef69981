"""The layer rules of docs/ARCHITECTURE.md as import-linter contracts (.importlinter): a broken rule
fails the suite, and so CI."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


def test_every_layer_contract_is_kept():
    result = subprocess.run([str(LINT), "--config", str(ROOT / ".importlinter"), "--no-cache"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_the_contracts_cover_the_rules_the_docs_state():
    config = (ROOT / ".importlinter").read_text()
    for contract in ("core-pure", "lexlib-pure", "nothing-imports-training", "services-below-interfaces",
                     "adapters-below-services"):
        assert f"[importlinter:contract:{contract}]" in config
    assert ".importlinter" in (ROOT / "docs" / "ARCHITECTURE.md").read_text()


def test_every_module_the_architecture_map_names_exists():
    """docs/ARCHITECTURE.md is a map: a module it names that no longer exists is a stale map."""
    import re

    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    named = set(re.findall(r"`((?:apps|worker|training|lexlib|legalsite|bench|templates|scripts)/[\w/.<>*-]+?)`", text))
    named |= {m.split(" ")[0] for m in re.findall(r"`((?:apps|worker|training|lexlib)/[\w/.-]+\.py) ", text)}
    paths = [n.split(":")[0] for n in named if "<" not in n and "*" not in n]
    assert len(paths) > 40
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"named in docs/ARCHITECTURE.md but not in the tree: {missing}"
    for module in ("apps/cases/services/intake.py", "apps/cases/services/runs.py", "worker/tasks.py",
                   "apps/judging/services.py", "worker/agents/pipeline.py", "worker/agents/types.py",
                   "apps/cases/evidence.py", "apps/review/services/reviews.py", "apps/review/services/memos.py"):
        assert module in text, module
