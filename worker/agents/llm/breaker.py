"""The circuit breaker: after repeated failures no call is made until the model has had time to recover."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from worker.agents.llm.errors import CircuitOpen

class CircuitBreaker:
    """closed → open after ``fail_max`` consecutive failures → half-open after
    ``reset_timeout_s`` (one probe call at a time) → closed on a success, or
    open again on a failure.

    The client records a failure for every transient failure of an HTTP
    attempt (connect error, timeout, 429, 5xx) and a success for every answer
    that shows the server is alive (2xx and other 4xx).  In-process and
    thread-safe; ``clock`` is injectable for tests.
    """

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"

    def __init__(
        self, fail_max: int = 5, reset_timeout_s: float = 30.0, *, clock: Callable[[], float] = time.monotonic
    ):
        if fail_max < 1:
            raise ValueError("fail_max must be at least 1")
        self.fail_max = fail_max
        self.reset_timeout_s = reset_timeout_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state = self.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probe_started: float | None = None
        self.opened_count = 0

    @property
    def state(self) -> str:
        with self._lock:
            return self._current_state()

    @property
    def failures(self) -> int:
        return self._failures

    def _current_state(self) -> str:
        if self._state == self.OPEN and self._clock() - self._opened_at >= self.reset_timeout_s:
            self._state = self.HALF_OPEN
            self._probe_started = None
        return self._state

    def before_call(self) -> None:
        """Raise CircuitOpen unless a call may go out now."""
        with self._lock:
            state = self._current_state()
            if state == self.CLOSED:
                return
            if state == self.HALF_OPEN:
                now = self._clock()
                # One probe at a time; a probe that never reported back (its
                # thread died) stops blocking after another reset period.
                if self._probe_started is None or now - self._probe_started >= self.reset_timeout_s:
                    self._probe_started = now
                    return
                raise CircuitOpen("model circuit half-open: a probe call is in flight")
            remaining = self.reset_timeout_s - (self._clock() - self._opened_at)
            raise CircuitOpen(f"model circuit open (retry in {max(0.0, remaining):.1f} s)")

    def record_success(self) -> None:
        with self._lock:
            self._state = self.CLOSED
            self._failures = 0
            self._probe_started = None

    def record_failure(self) -> None:
        with self._lock:
            state = self._current_state()
            self._failures += 1
            if state == self.HALF_OPEN or self._failures >= self.fail_max:
                if state != self.OPEN:
                    self.opened_count += 1
                self._state = self.OPEN
                self._opened_at = self._clock()
                self._probe_started = None
