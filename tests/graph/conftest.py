from pathlib import Path

import pytest
from django.core.management import call_command

DEMO = Path(__file__).resolve().parents[2] / "apps" / "corpus" / "demo"


@pytest.fixture
def demo_corpus(db):
    call_command("import_corpus", str(DEMO), "--no-progress")
