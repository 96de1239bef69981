"""A client for OpenAI-compatible chat-completion servers with JSON output.

vLLM serves the model in production and llama.cpp on CPU here; both speak
``POST /v1/chat/completions``.  The client asks for JSON-schema structured
output, parses the reply strictly, validates it against the schema and, when
it does not fit, asks once more with the errors spelled out.  Every way a call
can end is a typed outcome, never a default value:

* a validated :class:`LLMResult`;
* :class:`ModelUnavailable` (connection refused or reset, timeouts, 429/5xx
  after the retries, circuit open) - the case waits for the model;
* :class:`ModelOutputInvalid` (not JSON, truncated, schema-invalid after the
  repair attempts) - the raw text travels with the error into the evidence;
* :class:`ModelRequestRejected` (any other 4xx; a bug on our side, not retried);
* :class:`BudgetExceeded` (the per-case call or token budget is spent).

Only transient failures are retried, with capped exponential backoff and
jitter.  Replies are cached by a content hash of everything that determines
them, so replaying a stored evidence bundle calls no model.

Standard library only: this module is part of the pure reasoning core.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from worker.agents.jsonhash import canonical_json
from worker.agents.llm.breaker import CircuitBreaker
from worker.agents.llm.budget import Budget, Usage
from worker.agents.llm.cache import ResponseCache
from worker.agents.llm.errors import (
    CacheMiss,
    JSONParseError,
    LLMError,
    ModelOutputInvalid,
    ModelRequestRejected,
    ModelUnavailable,
)
from worker.agents.llm.jsonparse import parse_json_strict
from worker.agents.llm.result import LLMResult
from worker.agents.llm.retry import RetryPolicy, retry_after_seconds
from worker.agents.llm.schema import check_schema, validate

log = logging.getLogger(__name__)

STRUCTURED_MODES = ("json_schema", "json_object", "none")
CACHE_ENTRY_VERSION = 1
# How much of a bad reply is echoed back to the model in a repair turn and how
# many validation errors are listed there.
_REPAIR_ECHO_CHARS = 4000
_REPAIR_MAX_ERRORS = 8
_SCHEMA_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Words by which a server error says it cannot honour the requested output format.
_FORMAT_WORDS = ("response_format", "json_schema", "structured output", "guided", "grammar")


# --------------------------------------------------------------------------- client


class _Transient(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


@dataclass
class _CallState:
    stage: str
    request_hash: str
    mode: str
    fell_back: bool = False
    attempts: int = 0
    raw_texts: list[str] = field(default_factory=list)


@dataclass
class _Reply:
    content: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    model: str


def default_repair_message(errors: Sequence[str]) -> str:
    listed = "\n".join(f"- {e}" for e in errors[:_REPAIR_MAX_ERRORS])
    return (
        "Your previous reply was rejected / 上一次回复不合格:\n"
        f"{listed}\n"
        "Reply again with only the corrected JSON object that satisfies the required schema, nothing else. "
        "请只输出修正后、符合要求结构的 JSON 对象，不要输出其他内容。"
    )


def _schema_hint(schema: dict) -> str:
    return (
        "Reply with one JSON object that satisfies this JSON schema / 请只输出一个符合以下 JSON Schema 的 JSON 对象:\n"
        + json.dumps(schema, ensure_ascii=False, sort_keys=True)
    )


class LLMClient:
    """One model endpoint with retries, a breaker, a budget, usage and a cache.

    Cheap to create: make one per case run (its own ``Budget`` and ``Usage``)
    sharing a process-wide ``CircuitBreaker`` and ``ResponseCache``.

    ``base_url`` is the server root (``http://127.0.0.1:8000``) or its ``/v1``
    prefix; ``cache_scope`` (e.g. the matter id) enters the cache key so
    cached replies never cross matters.  ``replay=True`` answers only from the
    cache and raises :class:`CacheMiss` instead of calling the model.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 5.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        backoff_cap_s: float = 8.0,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 1024,
        structured: str = "json_schema",
        repair_attempts: int = 1,
        cache: ResponseCache | None = None,
        breaker: CircuitBreaker | None = None,
        budget: Budget | None = None,
        usage: Usage | None = None,
        cache_scope: str = "",
        replay: bool = False,
        json_object_schema: bool = True,
        max_response_bytes: int = 4_000_000,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be one of {STRUCTURED_MODES}")
        if max_retries < 0 or repair_attempts < 0:
            raise ValueError("max_retries and repair_attempts must be >= 0")
        if timeout_s <= 0 or connect_timeout_s <= 0:
            raise ValueError("timeouts must be positive")
        parts = urllib.parse.urlsplit(base_url or "")
        if not replay and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.base_url = base_url
        self._scheme = parts.scheme
        self._host = parts.hostname or ""
        self._port = parts.port
        prefix = parts.path.rstrip("/")
        self._path = prefix + ("/chat/completions" if prefix.endswith("/v1") else "/v1/chat/completions")
        self.model = model
        self._api_key = api_key
        self.timeout_s = float(timeout_s)
        self.connect_timeout_s = float(connect_timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.backoff_cap_s = float(backoff_cap_s)
        self.temperature = float(temperature)
        self.seed = int(seed)
        self.max_tokens = int(max_tokens)
        self.structured = structured
        self.repair_attempts = int(repair_attempts)
        self.cache = cache
        self.breaker = breaker
        self.budget = budget
        self.usage = usage if usage is not None else Usage()
        self.cache_scope = cache_scope
        self.replay = replay
        self.json_object_schema = json_object_schema
        self.max_response_bytes = max_response_bytes
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        self._mode_lock = threading.Lock()
        self._effective_mode = structured

    def __repr__(self) -> str:  # never shows the api key
        return f"LLMClient(base_url={self.base_url!r}, model={self.model!r}, structured={self.structured!r})"

    # ------------------------------------------------------------------ public

    def sampling_params(self) -> dict[str, Any]:
        """What determines a reply besides the messages: stored with every judgment."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "structured": self.structured,
            "repair_attempts": self.repair_attempts,
        }

    def request_hash(self, messages: Sequence[Mapping[str, str]], schema: dict, *, name: str) -> str:
        """sha256 over the canonical JSON of everything that determines the reply."""
        material = {
            "v": CACHE_ENTRY_VERSION,
            "model": self.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "schema": schema,
            "name": name,
            "sampling": {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens},
            "structured": self.structured,
            "repair_attempts": self.repair_attempts,
            "scope": self.cache_scope,
        }
        return hashlib.sha256(canonical_json(material)).hexdigest()

    def complete_json(
        self,
        messages: Sequence[Mapping[str, str]],
        schema: dict,
        *,
        name: str,
        stage: str | None = None,
        repair_message: Callable[[Sequence[str]], str] | None = None,
    ) -> LLMResult:
        """Ask for one JSON value fitting ``schema``; see the module doc for outcomes.

        ``name`` is the schema name sent to the server (``[A-Za-z0-9_-]{1,64}``)
        and, unless ``stage`` is given, the key under which usage is counted.
        """
        _check_messages(messages)
        check_schema(schema)
        if not _SCHEMA_NAME_RE.match(name or ""):
            raise ValueError("name must match [A-Za-z0-9_-]{1,64}")
        stage = stage or name
        started = self._clock()
        key = self.request_hash(messages, schema, name=name)

        cached = self._from_cache(key, schema, stage, started)
        if cached is not None:
            return cached
        if self.replay:
            self.usage.add(stage, failures=1)
            raise CacheMiss(f"replay: no stored reply for {stage} ({key[:12]})")

        with self._mode_lock:
            mode = self._effective_mode
        state = _CallState(stage=stage, request_hash=key, mode=mode, fell_back=mode != self.structured)
        original = [{"role": m["role"], "content": m["content"]} for m in messages]
        turns: list[dict[str, str]] = []  # repair turns appended after the original messages
        make_repair = repair_message or default_repair_message
        errors: list[str] = []
        try:
            for round_no in range(self.repair_attempts + 1):
                reply = self._exchange(original, turns, schema, name, state)
                state.raw_texts.append(reply.content)
                value, errors = self._check(reply, schema, state.mode)
                if not errors:
                    return self._succeed(key, value, reply, state, started, round_no)
                log.info("llm %s: reply invalid (%d errors), round %d", stage, len(errors), round_no)
                if round_no < self.repair_attempts:
                    self.usage.add(stage, repairs=1)
                    turns = turns + [
                        {"role": "assistant", "content": reply.content[:_REPAIR_ECHO_CHARS]},
                        {"role": "user", "content": make_repair(errors)},
                    ]
        except LLMError:
            self.usage.add(stage, failures=1, latency_s=self._clock() - started)
            raise
        self.usage.add(stage, failures=1, latency_s=self._clock() - started)
        raise ModelOutputInvalid(
            f"{stage}: reply does not fit the schema after {self.repair_attempts} repair attempt(s): "
            + "; ".join(errors[:3]),
            raw_text=state.raw_texts[-1],
            raw_texts=state.raw_texts,
            errors=errors,
            attempts=state.attempts,
            request_hash=key,
        )

    # ------------------------------------------------------------------ internals

    def _from_cache(self, key: str, schema: dict, stage: str, started: float) -> LLMResult | None:
        if self.cache is None:
            return None
        entry = self.cache.get(key)
        if not entry or entry.get("v") != CACHE_ENTRY_VERSION or not isinstance(entry.get("raw_text"), str):
            return None
        mode = entry.get("structured", self.structured)
        try:
            value = parse_json_strict(entry["raw_text"], allow_fence=mode == "none")
        except JSONParseError:
            return None
        if validate(value, schema):
            return None  # never trust a stored reply that no longer fits
        self.usage.add(stage, results=1, cache_hits=1, latency_s=self._clock() - started)
        return LLMResult(
            value=value,
            raw_text=entry["raw_text"],
            prompt_tokens=int(entry.get("prompt_tokens", 0)),
            completion_tokens=int(entry.get("completion_tokens", 0)),
            latency_s=self._clock() - started,
            attempts=0,
            cached=True,
            model=str(entry.get("model", self.model)),
            request_hash=key,
            stage=stage,
            structured=mode,
            fallback=bool(entry.get("fallback", False)),
            repairs=int(entry.get("repairs", 0)),
            finish_reason=entry.get("finish_reason"),
        )

    def _succeed(self, key: str, value: Any, reply: _Reply, state: _CallState, started: float, repairs: int):
        latency = self._clock() - started
        result = LLMResult(
            value=value,
            raw_text=reply.content,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            latency_s=latency,
            attempts=state.attempts,
            cached=False,
            model=reply.model or self.model,
            request_hash=key,
            stage=state.stage,
            structured=state.mode,
            fallback=state.fell_back,
            repairs=repairs,
            finish_reason=reply.finish_reason,
        )
        self.usage.add(state.stage, results=1, latency_s=latency)
        if self.cache is not None:
            entry = {"v": CACHE_ENTRY_VERSION, **result.record()}
            entry.pop("value")
            entry.pop("cached")
            try:
                self.cache.put(key, entry)
            except OSError as exc:  # a full disk must not lose a valid answer
                log.warning("llm cache write failed: %s", exc)
        return result

    def _check(self, reply: _Reply, schema: dict, mode: str) -> tuple[Any, list[str]]:
        try:
            value = parse_json_strict(reply.content, allow_fence=mode == "none")
        except JSONParseError as exc:
            note = " (reply cut off at max_tokens)" if reply.finish_reason == "length" else ""
            return None, [f"not valid JSON: {exc}{note}"]
        return value, validate(value, schema)

    def _payload(self, original, turns, schema: dict, name: str, mode: str) -> bytes:
        messages = list(original)
        if mode != "json_schema":
            messages.append({"role": "user", "content": _schema_hint(schema)})
        messages.extend(turns)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
            if self.json_object_schema:
                # llama-cpp-python turns this into a grammar; vLLM ignores it.
                body["response_format"]["schema"] = schema
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode()

    def _exchange(self, original, turns, schema: dict, name: str, state: _CallState) -> _Reply:
        """One reply from the server, retrying transient failures."""
        failures = 0
        while True:
            if self.breaker is not None:
                self.breaker.before_call()
            if self.budget is not None:
                self.budget.reserve_call()
            state.attempts += 1
            self.usage.add(state.stage, calls=1, retries=1 if failures else 0)
            payload = self._payload(original, turns, schema, name, state.mode)
            try:
                status, headers, body = self._post(payload)
                if status == 200:
                    if self.breaker is not None:
                        self.breaker.record_success()
                    return self._read_reply(body, state)
                if status in (408, 429) or status >= 500:
                    if status >= 500 and self._json_schema_refused(status, body, state):
                        if self.breaker is not None:
                            self.breaker.record_success()  # alive, just not for this format
                        self._fall_back(state)
                        continue
                    raise _Transient(f"HTTP {status}", _retry_after(headers))
            except _Transient as exc:
                if self.breaker is not None:
                    self.breaker.record_failure()
                failures += 1
                log.warning("llm %s: attempt %d failed: %s", state.stage, state.attempts, exc)
                if failures > self.max_retries:
                    raise ModelUnavailable(
                        f"{state.stage}: model unavailable after {state.attempts} attempt(s): {exc}"
                    ) from None
                self._sleep(self._backoff(failures - 1, exc.retry_after))
                continue
            # other 4xx: the server is alive, the request is wrong
            if self.breaker is not None:
                self.breaker.record_success()
            if self._json_schema_refused(status, body, state):
                self._fall_back(state)
                continue
            text = body[:2000].decode("utf-8", "replace")
            raise ModelRequestRejected(
                f"{state.stage}: server rejected the request (HTTP {status})", status=status, body=text
            )

    def _json_schema_refused(self, status: int, body: bytes, state: _CallState) -> bool:
        """Does this error say the server cannot do json_schema output?

        A 400/422 - or a 5xx: llama-cpp-python's server turns its request
        validation error for an unknown response_format type into a 500 -
        whose body names the response format or structured output.  Any
        other 4xx (context too long, unknown model) is a plain rejection.
        Checked once per call: the fallback request is not re-examined.
        """
        if state.mode != "json_schema" or state.fell_back:
            return False
        if status not in (400, 422) and status < 500:
            return False
        text = body[:4000].decode("utf-8", "replace").lower()
        return any(word in text for word in _FORMAT_WORDS)

    def _fall_back(self, state: _CallState) -> None:
        log.warning("llm %s: server refused json_schema output; using json_object", state.stage)
        state.mode = "json_object"
        state.fell_back = True
        with self._mode_lock:
            self._effective_mode = "json_object"

    def _backoff(self, failure_index: int, retry_after: float | None) -> float:
        return RetryPolicy(self.backoff_s, self.backoff_cap_s).delay(failure_index, retry_after, self._rng)

    def _read_reply(self, body: bytes, state: _CallState) -> _Reply:
        try:
            envelope = parse_json_strict(body.decode("utf-8"))
            choice = envelope["choices"][0]
            content = choice["message"]["content"]
            if not isinstance(content, str):
                raise TypeError("message content is not text")
        except (UnicodeDecodeError, JSONParseError, KeyError, IndexError, TypeError) as exc:
            raw = body[:_REPAIR_ECHO_CHARS].decode("utf-8", "replace")
            state.raw_texts.append(raw)
            raise ModelOutputInvalid(
                f"{state.stage}: malformed completion envelope ({type(exc).__name__}: {exc})",
                raw_text=raw,
                raw_texts=state.raw_texts,
                errors=[f"malformed envelope: {exc}"],
                attempts=state.attempts,
                request_hash=state.request_hash,
            ) from None
        usage = envelope.get("usage") if isinstance(envelope.get("usage"), dict) else {}
        prompt_tokens = _count(usage.get("prompt_tokens"))
        completion_tokens = _count(usage.get("completion_tokens"))
        self.usage.add(state.stage, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        if self.budget is not None:
            self.budget.add_tokens(prompt_tokens + completion_tokens)
        finish = choice.get("finish_reason")
        model = envelope.get("model")
        return _Reply(
            content=content,
            finish_reason=finish if isinstance(finish, str) else None,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            model=model if isinstance(model, str) else self.model,
        )

    def _post(self, payload: bytes) -> tuple[int, http.client.HTTPMessage, bytes]:
        """POST the payload; the whole exchange after connecting must end within timeout_s."""
        if self.replay:
            raise _Transient("replay mode: no model calls")
        conn_cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(self._host, self._port, timeout=self.connect_timeout_s)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            try:
                conn.connect()
            except TimeoutError:
                raise _Transient(f"connect timeout after {self.connect_timeout_s} s") from None
            deadline = self._clock_real() + self.timeout_s
            conn.sock.settimeout(self.timeout_s)
            conn.request("POST", self._path, body=payload, headers=headers)
            resp = conn.getresponse()
            chunks: list[bytes] = []
            size = 0
            while True:
                remaining = deadline - self._clock_real()
                if remaining <= 0:
                    raise TimeoutError
                conn.sock.settimeout(remaining)
                chunk = resp.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > self.max_response_bytes:
                    if resp.status == 200:
                        raise ModelOutputInvalid(
                            f"reply larger than {self.max_response_bytes} bytes",
                            raw_text=b"".join(chunks)[:_REPAIR_ECHO_CHARS].decode("utf-8", "replace"),
                        )
                    break  # an error page: what we have is enough to classify it
                chunks.append(chunk)
            return resp.status, resp.headers, b"".join(chunks)
        except TimeoutError:
            raise _Transient(f"no complete reply within {self.timeout_s} s") from None
        except (OSError, http.client.HTTPException) as exc:
            raise _Transient(f"{type(exc).__name__}: {exc}") from None
        finally:
            conn.close()

    @staticmethod
    def _clock_real() -> float:
        # Socket deadlines follow real time even when tests inject a fake clock.
        return time.monotonic()


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _retry_after(headers: http.client.HTTPMessage) -> float | None:
    return retry_after_seconds(headers.get("Retry-After") if headers is not None else None)


def _check_messages(messages: Sequence[Mapping[str, str]]) -> None:
    if not messages:
        raise ValueError("messages must not be empty")
    for m in messages:
        if m.get("role") not in ("system", "user", "assistant") or not isinstance(m.get("content"), str):
            raise ValueError("each message needs a role (system/user/assistant) and text content")


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
    "default_repair_message",
    "parse_json_strict",
]
