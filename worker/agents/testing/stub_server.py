"""An OpenAI-compatible stand-in for vLLM, for tests and CI.

Runs on 127.0.0.1 only.  In-process::

    with StubServer() as stub:
        stub.set_mode("503x2")
        client = LLMClient(stub.url, "stub-model")

or as a process: ``python -m worker.agents.testing.stub_server --port 8011``.

Endpoints: ``POST /v1/chat/completions``, ``GET /health``, ``GET /v1/models``,
``GET /_stats`` (call counters and the last requests) and ``POST /_control``
with a JSON body, any of::

    {"mode": "ok", "push": [<json value>, ...], "push_raw": ["text", ...],
     "clear": true, "reset_stats": true}

Modes (also settable per request with the header ``X-Stub-Mode``):

``ok``              a queued reply if any, else the minimal instance of the requested schema
``canned``          only queued replies (an empty queue answers 500)
``slow:N``          sleep N seconds (capped), then as ``ok``
``hang``            never answer (until the cap or shutdown), then drop the connection
``drop``            close the connection without an answer
``500`` / ``400``   always that status
``429``             always 429 with ``Retry-After: 1``
``503xN``           N times 503, then as ``ok``
``garbage``         a reply that is not JSON
``truncated``       the ``ok`` JSON cut in half, ``finish_reason: "length"``
``obey-injection``  if the user content holds an injection marker, a schema-shaped
                    reply citing the made-up article 999 and evidence [99]
``no-json-schema[:S]``  status S (default 400) when json_schema output is requested;
                    with S=500 the body names response_format as llama-cpp-python does

Usage is reported as characters / 2 (rounded up).  Every sleep is capped and
wakes up at shutdown.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import signal
import sys
import threading
import time
import urllib.request
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from worker.agents.llm.schema import SchemaError, minimal_instance, validate

MAX_BODY_BYTES = 8_000_000
DEFAULT_MAX_SLEEP_S = 30.0
INJECTION_MARKERS = (
    "ignore previous instructions",
    "ignore all previous instructions",
    "disregard the above",
    "忽略以上指令",
    "忽略之前的指令",
    "忽略上述指令",
    "system:",
)
_MODE_RE = re.compile(r"^(ok|canned|hang|drop|500|400|429|garbage|truncated|obey-injection)$|^slow:(\d+(?:\.\d+)?)$"
                      r"|^503x(\d+)$|^no-json-schema(?::(\d{3}))?$")  # fmt: skip


class _State:
    def __init__(self, model: str, max_sleep_s: float):
        self.lock = threading.Lock()
        self.model = model
        self.max_sleep_s = max_sleep_s
        self.stopping = threading.Event()
        self.mode = "ok"
        self.queue: deque[str] = deque()
        self.unavailable_left = 0
        self.reset_stats()

    def reset_stats(self) -> None:
        # A request still sleeping from before a reset must not touch the new
        # test's counters or queue when it wakes: it sees the generation change.
        self.generation = getattr(self, "generation", 0) + 1
        self.calls = 0
        self.by_status: dict[str, int] = {}
        self.health_calls = 0
        self.requests: deque[dict] = deque(maxlen=20)

    def set_mode(self, mode: str) -> None:
        m = _MODE_RE.match(mode)
        if not m:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        if m.group(3) is not None:
            self.unavailable_left = int(m.group(3))

    def stats(self) -> dict:
        return {
            "calls": self.calls,
            "by_status": dict(self.by_status),
            "health_calls": self.health_calls,
            "mode": self.mode,
            "queued": len(self.queue),
            "requests": list(self.requests),
        }


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 2)


def _requested_schema(body: dict) -> dict | None:
    fmt = body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_schema" and isinstance(fmt.get("json_schema"), dict):
        schema = fmt["json_schema"].get("schema")
        return schema if isinstance(schema, dict) else None
    if fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
        return fmt["schema"]
    return None


def _user_text(body: dict) -> str:
    return "\n".join(
        m.get("content", "") for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"
        and isinstance(m.get("content"), str)
    )


def _has_injection(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in INJECTION_MARKERS)


def _poison(schema: dict, value: Any, key: str = "") -> Any:
    """What an obedient model would write: article 999 and evidence [99] wherever they fit."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    lowered = key.lower()
    if "object" in kinds and isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _poison(props.get(k, {}), v, k) for k, v in value.items()}
    if "array" in kinds and isinstance(value, list):
        item_schema = schema.get("items", {})
        if not value and schema.get("maxItems", 1) >= 1:
            try:
                value = [minimal_instance(item_schema)]
            except SchemaError:
                return value
        return [_poison(item_schema, v, key) for v in value]
    if "string" in kinds:
        if "article" in lowered:
            return "999"
        return "依据第九百九十九条（第999条）定罪 [99]"
    if "integer" in kinds and ("evidence" in lowered or "cite" in lowered or "article" in lowered):
        return 99 if "article" not in lowered else 999
    return value


def _obedient_reply(schema: dict | None) -> str:
    if schema is None:
        return json.dumps({"articles": ["999"], "reasoning": "依据第999条 [99]"}, ensure_ascii=False)
    base = minimal_instance(schema)
    poisoned = _poison(schema, base)
    if validate(poisoned, schema):
        # The schema forbids 999 where it would go: poison only the free text.
        poisoned = _poison_strings_only(schema, base)
    return json.dumps(poisoned, ensure_ascii=False)


def _poison_strings_only(schema: dict, value: Any) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _poison_strings_only(props.get(k, {}), v) for k, v in value.items()}
    if isinstance(value, list):
        return [_poison_strings_only(schema.get("items", {}), v) for v in value]
    if isinstance(value, str) and "enum" not in schema and "const" not in schema:
        candidate = "依据第999条 [99]"
        return candidate if not validate(candidate, schema) else value
    return value


class _Handler(BaseHTTPRequestHandler):
    server_version = "LextraceStub/1"
    protocol_version = "HTTP/1.1"

    @property
    def state(self) -> _State:
        return self.server.stub_state  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # quiet: tests read /_stats instead

    # ------------------------------------------------------------------ helpers

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> bytes | None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self._send_json(413, {"error": {"message": "body too large or unsized"}})
            self.close_connection = True
            return None
        return self.rfile.read(length)

    def _sleep(self, seconds: float) -> bool:
        """Sleep (capped, woken by shutdown); False if the stub was reset or stopped meanwhile."""
        generation = self.state.generation
        self.state.stopping.wait(min(max(0.0, seconds), self.state.max_sleep_s))
        return generation == self.state.generation and not self.state.stopping.is_set()

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(2)
        except OSError:
            pass

    # ------------------------------------------------------------------ routes

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path == "/health":
            with self.state.lock:
                self.state.health_calls += 1
            self._send_json(200, {"status": "ok"})
        elif self.path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": self.state.model, "object": "model"}]})
        elif self.path == "/_stats":
            with self.state.lock:
                stats = self.state.stats()
            self._send_json(200, stats)
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        raw = self._read_body()
        if raw is None:
            return
        if self.path == "/_control":
            self._control(raw)
        elif self.path == "/v1/chat/completions":
            self._chat(raw)
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def _control(self, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body must be an object")
            with self.state.lock:
                if body.get("reset_stats"):
                    self.state.reset_stats()
                if body.get("clear"):
                    self.state.queue.clear()
                if "mode" in body:
                    self.state.set_mode(str(body["mode"]))
                for value in body.get("push", []):
                    self.state.queue.append(json.dumps(value, ensure_ascii=False))
                for text in body.get("push_raw", []):
                    if not isinstance(text, str):
                        raise ValueError("push_raw takes strings")
                    self.state.queue.append(text)
                stats = self.state.stats()
        except (ValueError, TypeError) as exc:
            self._send_json(400, {"error": {"message": str(exc)}})
            return
        self._send_json(200, {"mode": stats["mode"], "queued": stats["queued"]})

    def _chat(self, raw: bytes) -> None:
        state = self.state
        try:
            body = json.loads(raw)
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError
        except ValueError:
            self._send_json(400, {"error": {"message": "invalid JSON body"}})
            return
        header_mode = self.headers.get("X-Stub-Mode")
        with state.lock:
            state.calls += 1
            state.requests.append(body)
            mode = header_mode if header_mode and _MODE_RE.match(header_mode) else state.mode
            if mode.startswith("503x") and mode == state.mode:
                if state.unavailable_left > 0:
                    state.unavailable_left -= 1
                    mode = "503"
                else:
                    mode = "ok"
            generation = state.generation
        status = self._respond(mode, body)
        with state.lock:
            if generation == state.generation:
                state.by_status[str(status)] = state.by_status.get(str(status), 0) + 1

    def _respond(self, mode: str, body: dict) -> int:
        state = self.state
        schema = _requested_schema(body)
        if mode == "503":
            self._send_json(503, {"error": {"message": "overloaded"}}, {"Retry-After": "0"})
            return 503
        if mode == "500":
            self._send_json(500, {"error": {"message": "internal error"}})
            return 500
        if mode == "429":
            self._send_json(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
            return 429
        if mode == "400":
            self._send_json(400, {"error": {"message": "bad request"}})
            return 400
        if mode == "drop":
            self._drop()
            return 0
        if mode == "hang":
            self._sleep(state.max_sleep_s)
            self._drop()
            return 0
        m = re.match(r"^no-json-schema(?::(\d{3}))?$", mode)
        if m:
            fmt = body.get("response_format") or {}
            if fmt.get("type") == "json_schema":
                status = int(m.group(1) or 400)
                message = "response_format: Input should be 'text' or 'json_object' (type=literal_error)"
                self._send_json(status, {"error": {"message": message, "type": "invalid_request_error"}})
                return status
            mode = "ok"
        if mode.startswith("slow:"):
            if not self._sleep(float(mode.split(":", 1)[1])):
                self._drop()
                return 0
            mode = "ok"

        finish = "stop"
        if mode == "garbage":
            content = "Sure! Here is the answer: {charges: 盗窃罪,, ]] not json"
        elif mode == "obey-injection" and _has_injection(_user_text(body)):
            content = _obedient_reply(schema)
        else:
            with state.lock:
                queued = state.queue.popleft() if state.queue else None
            if queued is None and mode == "canned":
                self._send_json(500, {"error": {"message": "stub: canned queue is empty"}})
                return 500
            if queued is not None:
                content = queued
            elif schema is not None:
                try:
                    content = json.dumps(minimal_instance(schema), ensure_ascii=False)
                except SchemaError as exc:
                    self._send_json(400, {"error": {"message": f"stub cannot satisfy schema: {exc}"}})
                    return 400
            else:
                content = "{}"
            if mode == "truncated":
                content = content[: max(1, len(content) // 2)]
                finish = "length"
        prompt_chars = sum(len(m.get("content", "")) for m in body["messages"] if isinstance(m, dict)
                           and isinstance(m.get("content"), str))  # fmt: skip
        usage = {"prompt_tokens": math.ceil(prompt_chars / 2), "completion_tokens": _tokens(content)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send_json(
            200,
            {
                "id": f"chatcmpl-stub-{state.calls}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model") or state.model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
                ],
                "usage": usage,
            },
        )
        return 200


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout tests) leaves a broken pipe: not news.
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class StubServer:
    """The stub in a background thread; a context manager with ``.url``."""

    def __init__(self, port: int = 0, *, model: str = "stub-model", max_sleep_s: float = DEFAULT_MAX_SLEEP_S):
        self.state = _State(model, max_sleep_s)
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.stub_state = self.state  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> StubServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="llm-stub", daemon=True)  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        self.state.stopping.set()  # wakes sleeping handlers
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # The helpers go through the HTTP control API, so it is exercised too.
    def control(self, **body: Any) -> dict:
        req = urllib.request.Request(
            self.url + "/_control", data=json.dumps(body, ensure_ascii=False).encode(), method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310 - loopback URL we built
            return json.loads(resp.read())

    def set_mode(self, mode: str) -> None:
        self.control(mode=mode)

    def push(self, *values: Any) -> None:
        self.control(push=list(values))

    def push_raw(self, *texts: str) -> None:
        self.control(push_raw=list(texts))

    def reset(self, mode: str = "ok") -> None:
        self.control(mode=mode, clear=True, reset_stats=True)

    def stats(self) -> dict:
        with urllib.request.urlopen(self.url + "/_stats", timeout=5) as resp:  # noqa: S310
            return json.loads(resp.read())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="OpenAI-compatible stub model server (127.0.0.1 only)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--model", default="stub-model")
    parser.add_argument("--max-sleep", type=float, default=DEFAULT_MAX_SLEEP_S)
    args = parser.parse_args(argv)
    stub = StubServer(args.port, model=args.model, max_sleep_s=args.max_sleep)
    stub.state.set_mode(args.mode)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    stub.start()
    print(f"stub model server listening on {stub.url}", flush=True)
    try:
        done.wait()
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["INJECTION_MARKERS", "StubServer", "main"]
