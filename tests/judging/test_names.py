"""One source for the names of strategies, modes and ablations (worker/agents/names.py), one
strategy registry, one base class declaring every optional feature, one judging service."""

import inspect

import pytest

from apps.cases.models import JudgmentRun
from apps.cases.services.runs import ABLATION_LABELS
from apps.evaluation.forms import EvaluationForm
from apps.judging import services as judging
from worker.agents import pipeline
from worker.agents.names import ABLATIONS, MODES, STRATEGIES
from worker.agents.strategies.base import Strategy
from worker.agents.strategies.registry import STRATEGY_CLASSES


def test_every_layer_takes_the_names_from_one_list():
    assert tuple(JudgmentRun.Strategy.values) == STRATEGIES
    assert tuple(JudgmentRun.Mode.values) == MODES
    assert tuple(ABLATION_LABELS) == ABLATIONS, "every ablation has a label, and only those"
    assert pipeline.ABLATIONS is ABLATIONS and judging.MODES is MODES and judging.STRATEGIES is STRATEGIES
    form = EvaluationForm()
    assert [v for v, _label in form.fields["strategy"].choices] == list(STRATEGIES)
    assert [v for v, _label in form.fields["ablation"].choices] == list(ABLATIONS)
    for name in ABLATIONS:
        pipeline.Params.for_ablation(name)


def test_every_strategy_is_registered_and_declares_the_optional_features():
    assert tuple(STRATEGY_CLASSES) == STRATEGIES
    for name, cls in STRATEGY_CLASSES.items():
        assert issubclass(cls, Strategy) and cls.name == name
    optional = ("prejudge_k", "intent_classifier", "expand_keywords", "pick_community", "select_cases", "client",
                "lang", "records")
    for feature in optional:
        assert hasattr(Strategy, feature), feature
    # The pipeline reads the declared features; it no longer probes a strategy for them.
    assert "getattr(strategy" not in inspect.getsource(pipeline)


@pytest.mark.django_db
def test_judgment_compute_takes_a_strategy_by_name_or_built():
    signature = inspect.signature(judging.judgment_compute)
    assert {"case", "strategy", "mode", "ablation"} <= set(signature.parameters)
    assert all(p.kind is p.KEYWORD_ONLY for p in signature.parameters.values())
    built = judging.strategy_build("statistical")
    assert isinstance(built, STRATEGY_CLASSES["statistical"])
