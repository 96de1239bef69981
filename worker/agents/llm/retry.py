"""The one retry policy of the OpenAI-compatible clients (chat completions: worker/agents/llm/client.py;
embeddings: lexlib/search/embeddings.py). Only transient failures are retried (refused or dropped
connections, timeouts, 429, 5xx), with capped exponential backoff and equal jitter, never sooner than
the server's Retry-After and never later than the cap."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    base_s: float = 0.5
    cap_s: float = 8.0

    def delay(self, failure_index: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait after the ``failure_index``-th failure (0-based): half fixed, half random."""
        base = min(self.cap_s, self.base_s * (2**failure_index))
        delay = base / 2 + (rng or random).uniform(0, base / 2)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.cap_s)


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header in seconds; None when absent or an HTTP date (our own backoff applies)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    if seconds is None or not math.isfinite(seconds):
        return None
    return max(0.0, seconds)
