"""Training the statistical models from the corpus and handing them to the agents."""

from pathlib import Path

import pytest

from apps.judging.services import statistical_strategy
from apps.registry.models import ModelVersion
from apps.registry.services import model_activate, statistical_models_train

DEMO_CASES = Path(__file__).resolve().parents[2] / "apps" / "corpus" / "demo" / "cases.jsonl"
pytestmark = pytest.mark.django_db


def test_training_registers_and_activates_one_model_per_kind_and_the_agents_use_them(tmp_path):
    registered = statistical_models_train(cases=DEMO_CASES, out=tmp_path)
    assert set(registered) == {"charges", "articles", "term"}
    assert ModelVersion.objects.filter(active=True).count() == 3
    strategy = statistical_strategy()
    assert strategy.charge_model.model_id == registered["charges"].model_id
    assert strategy.versions()["charge_model"] == registered["charges"].model_id
    top = strategy.charge_model.top(strategy.tokenize("被告人翻墙入户窃取现金和手机"), k=1)
    assert top and 0 < top[0][1] <= 1


def test_activating_a_version_deactivates_the_previous_one(tmp_path):
    first = statistical_models_train(cases=DEMO_CASES, out=tmp_path / "a")["charges"]
    second = statistical_models_train(cases=DEMO_CASES, out=tmp_path / "b")["charges"]
    assert list(ModelVersion.objects.filter(kind="charges", active=True)) == [second]
    model_activate(version=first)
    assert list(ModelVersion.objects.filter(kind="charges", active=True)) == [first]


def test_a_tampered_artefact_is_refused(tmp_path):
    registered = statistical_models_train(cases=DEMO_CASES, out=tmp_path)
    weights = next((tmp_path / "charges").glob("*.npy"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(Exception):
        from apps.registry.services import model_register

        model_register(kind="charges", directory=tmp_path / "charges")
    assert registered["charges"].active
