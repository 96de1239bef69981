"""The typed outcomes of an LLM call other than a result (worker/agents/llm/client.py)."""

from __future__ import annotations

from collections.abc import Sequence

class LLMError(Exception):
    """Base of every failure the client reports."""


class ModelUnavailable(LLMError):
    """The model could not be reached in time; nothing was decided."""


class CircuitOpen(ModelUnavailable):
    """The breaker is open: the call was refused without contacting the server."""


class ModelRequestRejected(LLMError):
    """The server refused the request itself (4xx). Retrying would not help."""

    def __init__(self, message: str, *, status: int, body: str = ""):
        super().__init__(message)
        self.status = status
        self.body = body


class ModelOutputInvalid(LLMError):
    """The model answered, but not with JSON that fits the schema.

    ``raw_text`` is the last reply, ``raw_texts`` every reply of this call (the
    first answer and each repair), ``errors`` what was wrong with the last one.
    """

    def __init__(
        self,
        message: str,
        *,
        raw_text: str,
        raw_texts: Sequence[str] = (),
        errors: Sequence[str] = (),
        attempts: int = 0,
        request_hash: str = "",
    ):
        super().__init__(message)
        self.raw_text = raw_text
        self.raw_texts = list(raw_texts) or [raw_text]
        self.errors = list(errors)
        self.attempts = attempts
        self.request_hash = request_hash


class BudgetExceeded(LLMError):
    """The per-case budget of calls or tokens is spent."""


class CacheMiss(LLMError):
    """Replay mode: the stored bundle holds no reply for this request."""


class JSONParseError(ValueError):
    """A reply is not exactly one strict JSON value."""
