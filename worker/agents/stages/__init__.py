"""The stages of the reasoning core, in the order the pipeline (worker/agents/pipeline.py) runs them:

focus.py → features.py → the strategy's pre-judged charges → researcher/ → auditor/ → adjudicator.py →
verification.py. What they share is here: the clock that records each stage's cost in the bundle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from worker.agents.types import StageCost

if TYPE_CHECKING:
    from worker.agents.strategies.base import Strategy

Progress = Callable[[str, dict], None]


@dataclass
class StageClock:
    """Runs a stage and records its cost: the seconds it took and the LLM calls and tokens the strategy spent."""

    costs: list[StageCost] = field(default_factory=list)
    progress: Progress | None = None
    defendant: str = ""

    def stage(self, name: str, strategy: Strategy, fn, *args, **kwargs):
        if self.progress:
            self.progress("stage", {"defendant": self.defendant, "stage": name})
        before = strategy.usage()
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            after = strategy.usage()
            calls = prompt = completion = 0
            for stage_name, (c, p, q) in after.items():
                c0, p0, q0 = before.get(stage_name, (0, 0, 0))
                calls, prompt, completion = calls + c - c0, prompt + p - p0, completion + q - q0
            self.costs.append(StageCost(stage=name, seconds=round(time.perf_counter() - start, 4), llm_calls=calls,
                                        prompt_tokens=prompt, completion_tokens=completion))
