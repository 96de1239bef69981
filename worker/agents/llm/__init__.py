"""LLM backend of the reasoning core: an OpenAI-compatible JSON client and its parts.

The stub server (``worker.agents.testing.stub_server``) is for tests and is not
imported here.
"""

from worker.agents.llm.client import (
    Budget,
    BudgetExceeded,
    CacheMiss,
    CircuitBreaker,
    CircuitOpen,
    DirectoryResponseCache,
    JSONParseError,
    LLMClient,
    LLMError,
    LLMResult,
    MemoryResponseCache,
    ModelOutputInvalid,
    ModelRequestRejected,
    ModelUnavailable,
    ResponseCache,
    StageUsage,
    Usage,
    canonical_json,
    parse_json_strict,
)
from worker.agents.llm.schema import SchemaError, check_schema, minimal_instance, validate

__all__ = [
    "Budget",
    "BudgetExceeded",
    "CacheMiss",
    "CircuitBreaker",
    "CircuitOpen",
    "DirectoryResponseCache",
    "JSONParseError",
    "LLMClient",
    "LLMError",
    "LLMResult",
    "MemoryResponseCache",
    "ModelOutputInvalid",
    "ModelRequestRejected",
    "ModelUnavailable",
    "ResponseCache",
    "SchemaError",
    "StageUsage",
    "Usage",
    "canonical_json",
    "check_schema",
    "minimal_instance",
    "parse_json_strict",
    "validate",
]
