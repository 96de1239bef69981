"""The LLM feature strategy over real HTTP against the OpenAI-compatible stub."""

import json

import pytest

from worker.agents.llm import LLMClient
from worker.agents.stages.features import LexiconFeatureExtractor, LLMFeatureExtractor
from worker.agents.testing.stub_server import StubServer


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def reply(**dims):
    return {d: dims.get(d, []) for d in ("defendant", "behaviour", "victim", "mental")}


def test_it_returns_the_models_labels_in_the_same_shape_as_the_lexicon(stub):
    stub.set_mode("canned")
    stub.push(reply(defendant=["累犯"], behaviour=["入户", "秘密窃取"], victim=["财物为手机"], mental=["自首"]))
    extractor = LLMFeatureExtractor(LLMClient(stub.url, "stub-model", max_retries=0))
    found = extractor.extract("被告人张某入户盗窃手机一部，后自首。")
    assert found.behaviour == ("入户", "秘密窃取") and found.mental == ("自首",)
    assert found.text().startswith("被告人特征：累犯；行为：入户、秘密窃取；")
    assert type(found) is type(LexiconFeatureExtractor().extract(""))
    assert extractor.version.startswith("llm:stub-model:")


def test_labels_with_amounts_or_names_are_dropped_whatever_the_model_says(stub):
    stub.set_mode("canned")
    stub.push(reply(behaviour=["盗窃3723元", "秘密窃取", "秘密窃取"], defendant=["张某系累犯", "累犯"]))
    found = LLMFeatureExtractor(LLMClient(stub.url, "stub-model", max_retries=0)).extract("…", names=["张某"])
    assert found.behaviour == ("秘密窃取",) and found.defendant == ("累犯",)
    assert json.dumps(found.as_dict(), ensure_ascii=False).count("3723") == 0
