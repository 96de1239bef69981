"""E1: the model circuit breaker shared by every process through Redis; the degraded banner;
"model unavailable" instead of any judgment while the circuit is open."""

import threading
import time
import uuid

import pytest
import redis
from django.conf import settings
from django.test import override_settings

from apps.cases.models import DefendantResult
from apps.cases.services.runs import judgment_execute, judgment_request
from apps.core import operations
from apps.core.operations import SharedCircuitBreaker, model_circuit
from tests.cases.conftest import make_case
from worker.agents.llm import CircuitOpen, LLMClient, ModelUnavailable
from worker.agents.testing.stub_server import StubServer

SCHEMA = {"type": "object", "properties": {"charges": {"type": "array", "items": {"type": "string"}}},
          "required": ["charges"], "additionalProperties": False}
MESSAGES = [{"role": "user", "content": "被告人张三盗窃手机一部。请预判罪名。"}]


@pytest.fixture
def key():
    """A circuit of its own per test (other tests share this Redis database)."""
    name = f"lextrace:test:circuit:{uuid.uuid4().hex}"
    yield name
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(name, name + ":probe")


def breaker_in_another_process(key, **kw):
    # Its own Redis connection, as a second worker process would have; nothing shared in memory.
    return SharedCircuitBreaker(key=key, client=redis.Redis.from_url(settings.REDIS_URL), **kw)


def client_for(url, breaker):
    return LLMClient(url, "stub-model", breaker=breaker, max_retries=0, timeout_s=2, sleep=lambda s: None)


def test_the_circuit_opened_by_one_process_stops_the_other_and_one_probe_closes_it(key):
    with StubServer() as stub:
        stub.set_mode("500")
        first = breaker_in_another_process(key, fail_max=2, reset_timeout_s=1.0)
        second = breaker_in_another_process(key, fail_max=2, reset_timeout_s=1.0)
        for _ in range(2):
            with pytest.raises(ModelUnavailable):
                client_for(stub.url, first).complete_json(MESSAGES, SCHEMA, name="s")
        assert first.state == second.state == "open"
        with pytest.raises(CircuitOpen):
            client_for(stub.url, second).complete_json(MESSAGES, SCHEMA, name="s")
        assert stub.stats()["calls"] == 2  # the second process never reached the server

        time.sleep(1.1)
        assert second.state == "half_open"
        # Half-open: one probe for all processes; the other one is refused meanwhile.
        second.before_call()
        with pytest.raises(CircuitOpen, match="probe"):
            first.before_call()
        second.record_failure()  # the probe failed: open again, for everybody
        assert first.state == "open"

        time.sleep(1.1)
        stub.set_mode("ok")
        assert client_for(stub.url, first).complete_json(MESSAGES, SCHEMA, name="s").value == {"charges": []}
        assert first.state == second.state == "closed" and second.failures == 0


def test_connection_refused_counts_as_a_failure(key):
    with StubServer() as stub:
        url = stub.url
    breaker = breaker_in_another_process(key, fail_max=1, reset_timeout_s=60)
    with pytest.raises(ModelUnavailable):
        client_for(url, breaker).complete_json(MESSAGES, SCHEMA, name="s")
    assert breaker.state == "open"


def test_exactly_one_probe_goes_out_when_many_ask_at_once(key):
    breakers = [breaker_in_another_process(key, fail_max=1, reset_timeout_s=0.5) for _ in range(6)]
    breakers[0].record_failure()
    time.sleep(0.6)
    admitted = []

    def ask(b):
        try:
            b.before_call()
            admitted.append(b)
        except CircuitOpen:
            pass

    threads = [threading.Thread(target=ask, args=(b,)) for b in breakers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(admitted) == 1


def test_without_redis_the_breaker_lets_calls_through_and_says_unknown(key):
    with StubServer() as stub:
        url = stub.url
    port = int(url.rsplit(":", 1)[1].split("/")[0])  # nothing listens there any more
    dead = SharedCircuitBreaker(key=key, client=redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5),
                                fail_max=1)
    dead.record_failure()
    dead.before_call()  # no exception: a broken breaker must not stop judgments on its own
    assert dead.state == "unknown"


# --- the application's side ------------------------------------------------------------------


@pytest.fixture
def circuit():
    breaker = model_circuit()
    breaker.reset()
    yield breaker
    breaker.reset()


def test_an_llm_run_while_the_circuit_is_open_is_model_unavailable_never_a_judgment(personas, judging_corpus, circuit):
    with StubServer() as stub, override_settings(LLM_BASE_URL=stub.url, LLM_MODEL="stub-model"):
        for _ in range(settings.LLM_BREAKER_FAIL_MAX):
            circuit.record_failure()
        assert circuit.state == "open"
        case = make_case(personas.staff_a, personas.team_a)
        run = judgment_request(case=case, user=personas.staff_a, strategy="llm")
        judgment_execute(run_id=run.pk, worker="test")
        results = list(DefendantResult.objects.filter(run=run))
        assert [r.status for r in results] == ["model_unavailable", "model_unavailable"]
        assert all(not r.charges and not r.article_keys and r.term_months is None for r in results)
        assert stub.stats()["calls"] == 0


@pytest.fixture
def alive_key(monkeypatch):
    """A liveness key of this test's own: a suite's shared worker keeps marking the real one."""
    key = f"lextrace:test:worker-alive:{uuid.uuid4().hex}"
    monkeypatch.setattr(operations, "WORKER_ALIVE_KEY", key)
    yield key
    redis.Redis.from_url(settings.REDIS_URL).delete(key)


@pytest.mark.django_db
def test_the_banner_shows_an_open_model_circuit_and_a_missing_worker(personas, circuit, alive_key):
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    with override_settings(LLM_BASE_URL="http://127.0.0.1:9/v1", LLM_MODEL="m"):
        page = client.get("/").content.decode()
        assert 'id="degraded-banner"' in page and "no worker is running" in page
        assert "language model is unavailable" not in page
        for _ in range(settings.LLM_BREAKER_FAIL_MAX):
            circuit.record_failure()
        page = client.get("/").content.decode()
        assert "language model is unavailable" in page

        operations.worker_alive_mark("w@test")
        circuit.reset()
        page = client.get("/").content.decode()
        assert 'id="degraded-banner"' not in page
    # Signed-out visitors are told nothing about the system's state.
    assert 'id="degraded-banner"' not in personas.client().get("/accounts/login/").content.decode()


@pytest.mark.django_db
def test_the_banner_says_so_when_redis_is_unreachable(personas, monkeypatch):
    monkeypatch.setattr(operations, "_clients", {})
    with override_settings(REDIS_URL="redis://127.0.0.1:9/0"):
        page = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en").get("/").content.decode()
    assert 'id="degraded-banner"' in page and "the task queue cannot be reached" in page
