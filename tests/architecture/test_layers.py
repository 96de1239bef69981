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
