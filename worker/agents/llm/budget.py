"""Token and call accounting per stage, and the per-case budget of an LLM strategy."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

from worker.agents.llm.errors import BudgetExceeded

@dataclass
class StageUsage:
    calls: int = 0  # HTTP requests sent (first tries, retries, repairs, fallbacks)
    results: int = 0  # validated results returned (cached ones included)
    cache_hits: int = 0
    retries: int = 0
    repairs: int = 0
    failures: int = 0  # calls that ended in an error
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Usage:
    """Thread-safe call and token counters, per stage.

    Tokens are what the server reported in ``usage`` for replies actually
    received; cache hits add no tokens (they cost nothing).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stages: dict[str, StageUsage] = {}

    def add(self, stage: str, **deltas: float) -> None:
        with self._lock:
            entry = self._stages.setdefault(stage, StageUsage())
            for key, delta in deltas.items():
                setattr(entry, key, getattr(entry, key) + delta)

    def stage(self, stage: str) -> StageUsage:
        with self._lock:
            return StageUsage(**asdict(self._stages.get(stage, StageUsage())))

    def snapshot(self) -> dict[str, dict[str, float]]:
        with self._lock:
            return {name: {**asdict(s), "total_tokens": s.total_tokens} for name, s in sorted(self._stages.items())}

    def totals(self) -> StageUsage:
        with self._lock:
            out = StageUsage()
            for s in self._stages.values():
                for key, value in asdict(s).items():
                    setattr(out, key, getattr(out, key) + value)
            return out


class Budget:
    """Caps for one case: model calls and total (prompt + completion) tokens.

    ``reserve_call`` refuses a call that would exceed ``max_calls`` before it
    is sent; ``add_tokens`` raises once a reply has pushed the total over
    ``max_tokens`` (the tokens are spent by then; the next stage must not run).
    None means unlimited.  Thread-safe.
    """

    def __init__(self, max_calls: int | None = None, max_tokens: int | None = None):
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self._calls = 0
        self._tokens = 0

    @property
    def calls(self) -> int:
        return self._calls

    @property
    def tokens(self) -> int:
        return self._tokens

    def reserve_call(self) -> None:
        with self._lock:
            if self._tokens_over():
                raise BudgetExceeded(f"token budget spent ({self._tokens} > {self.max_tokens})")
            if self.max_calls is not None and self._calls + 1 > self.max_calls:
                raise BudgetExceeded(f"call budget spent ({self._calls} of {self.max_calls})")
            self._calls += 1

    def add_tokens(self, n: int) -> None:
        with self._lock:
            self._tokens += max(0, int(n))
            if self._tokens_over():
                raise BudgetExceeded(f"token budget exceeded ({self._tokens} > {self.max_tokens})")

    def _tokens_over(self) -> bool:
        return self.max_tokens is not None and self._tokens > self.max_tokens
