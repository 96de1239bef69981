"""Training and serving see the same tokens: retraining exports every charge name of the corpus and
training.statistical builds its tokenizer from them with the one builder serving uses
(lexlib.search.tokenize.legal_tokenizer_of), so the fingerprints agree."""

from pathlib import Path

import pytest
from django.core.management import call_command

from apps.corpus.models import Charge
from apps.corpus.search_service import legal_tokenizer
from apps.registry.training import training_cases_export, training_structure_export
from training.statistical import load_cases, load_records, training_tokenizer

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[2] / "apps" / "corpus" / "demo"
FACTS = "被告人张某以非法占有为目的，冒充国家机关工作人员招摇撞骗，骗取被害人财物，又容留他人吸毒。"


def test_retraining_tokenizes_exactly_as_serving(tmp_path):
    call_command("import_corpus", str(DEMO), "--no-progress")
    Charge.objects.get_or_create(name="招摇撞骗罪")  # a charge no case and no statute of the export names
    training_structure_export(tmp_path)
    training_cases_export(tmp_path / "cases.jsonl")
    served = legal_tokenizer()
    charges = (tmp_path / "charges.txt").read_text(encoding="utf-8").splitlines()
    trained = training_tokenizer(load_cases(tmp_path / "cases.jsonl"), load_records(tmp_path / "statutes.jsonl"),
                                 charges=charges)
    assert trained.fingerprint() == served.fingerprint()
    assert trained.tokens(FACTS) == served.tokens(FACTS)
    # What training did before: only the charges its cases and statutes name. A corpus charge outside
    # them is split differently, so a model saw other tokens than it is served.
    before = training_tokenizer(load_cases(tmp_path / "cases.jsonl"), load_records(tmp_path / "statutes.jsonl"))
    assert before.fingerprint() != served.fingerprint()
