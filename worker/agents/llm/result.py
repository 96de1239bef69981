"""A validated reply of the model, and how it is recorded in the evidence bundle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LLMResult:
    value: Any  # the parsed, schema-valid JSON
    raw_text: str  # the reply text that produced ``value``
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int  # HTTP requests this call made (0 when cached)
    cached: bool
    model: str
    request_hash: str
    stage: str = ""
    structured: str = "json_schema"  # the response_format actually used
    fallback: bool = False  # the server refused json_schema; json_object was used
    repairs: int = 0
    finish_reason: str | None = None

    def record(self) -> dict[str, Any]:
        """A JSON-ready description for the evidence bundle."""
        return {
            "stage": self.stage,
            "model": self.model,
            "request_hash": self.request_hash,
            "raw_text": self.raw_text,
            "value": self.value,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 4),
            "attempts": self.attempts,
            "cached": self.cached,
            "structured": self.structured,
            "fallback": self.fallback,
            "repairs": self.repairs,
            "finish_reason": self.finish_reason,
        }
