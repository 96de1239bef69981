"""The LLM strategy for ontology features: the `features` prompt through an
OpenAI-compatible server (vLLM on a GPU host), same interface as
features.LexiconFeatureExtractor.

The model is asked for abstract labels; anything that still carries a digit or
a name given by the caller is dropped, so the graph never stores exact amounts
or names whatever the model returns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from worker.agents.graph_types import DIMENSIONS
from worker.agents.prompts import PROMPT_VERSION, build_prompt
from worker.agents.stages.features import CaseFeatures

_DIGIT = re.compile(r"[0-9０-９]")
MAX_LABEL_CHARS = 20


class LLMFeatureExtractor:
    def __init__(self, client, *, lang: str = "zh"):
        self.client = client
        self.lang = lang

    @property
    def version(self) -> str:
        return f"llm:{self.client.model}:{PROMPT_VERSION}"

    def extract(self, text: str, *, names: Sequence[str] = ()) -> CaseFeatures:
        prompt = build_prompt("features", self.lang, facts=text)
        value = self.client.complete_json(prompt.messages, prompt.schema, name=prompt.name, stage="features").value
        cleaned = {}
        for dimension in DIMENSIONS:
            labels = []
            for raw in value.get(dimension, []):
                label = raw.strip()
                if (not label or len(label) > MAX_LABEL_CHARS or _DIGIT.search(label)
                        or any(n and n in label for n in names) or label in labels):
                    continue
                labels.append(label)
            cleaned[dimension] = tuple(labels)
        return CaseFeatures(**cleaned)
