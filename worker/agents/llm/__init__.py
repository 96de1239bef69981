"""LLM backend of the reasoning core: an OpenAI-compatible JSON client (client.py) and its parts by
concern: errors.py (the typed outcomes), jsonparse.py (strict JSON), budget.py (usage and the per-case
budget), breaker.py (the circuit breaker), cache.py (the reply cache), result.py (a validated reply), schema.py (JSON-schema checks).

The stub server (``worker.agents.testing.stub_server``) is for tests and is not
imported here.
"""

from worker.agents.jsonhash import canonical_json
from worker.agents.llm.breaker import CircuitBreaker
from worker.agents.llm.budget import Budget, StageUsage, Usage
from worker.agents.llm.cache import DirectoryResponseCache, MemoryResponseCache, ResponseCache
from worker.agents.llm.client import LLMClient
from worker.agents.llm.errors import (
    BudgetExceeded,
    CacheMiss,
    CircuitOpen,
    JSONParseError,
    LLMError,
    ModelOutputInvalid,
    ModelRequestRejected,
    ModelUnavailable,
)
from worker.agents.llm.jsonparse import parse_json_strict
from worker.agents.llm.result import LLMResult
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
