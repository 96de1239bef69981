import pytest
from django.conf import settings
from django.test import Client


@pytest.fixture(autouse=True)
def fresh_report(settings):
    """Each request computes the report (the caching itself is tested below)."""
    settings.HEALTH_CACHE_S = 0


@pytest.fixture
def client(personas):
    """Signed in: anonymous callers get the status alone (test_anonymous_callers_get_the_status_only)."""
    return personas.client(personas.staff_a)


@pytest.mark.django_db
def test_healthz_reports_every_component_without_secrets(client):
    response = client.get("/healthz")
    body = response.json()
    names = [c["name"] for c in body["checks"]]
    assert names == ["database", "extensions", "broker", "worker", "model", "redelivery"]
    checks = {c["name"]: c for c in body["checks"]}
    assert checks["database"]["ok"] and checks["extensions"]["ok"] and checks["broker"]["ok"]
    assert "vector" in checks["extensions"]["detail"] and "age" in checks["extensions"]["detail"]
    text = response.content.decode()
    db = settings.DATABASES["default"]
    for secret in (db["PASSWORD"], db["USER"], str(db["PORT"]), settings.SECRET_KEY, "redis://"):
        assert secret not in text
    assert response.status_code == 200
    assert body["status"] in ("ok", "degraded")


@pytest.mark.django_db
def test_the_health_page_is_public_and_shows_the_components(client):
    # In English the page names the components as /healthz does (tests/core/test_zh_pages.py: in Chinese).
    response = client.get("/health/", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    page = response.content.decode()
    for name in ("database", "extensions", "broker", "worker", "model", "redelivery"):
        assert name in page
    anonymous = Client().get("/health/", HTTP_ACCEPT_LANGUAGE="en")
    assert anonymous.status_code == 200 and "redelivery" not in anonymous.content.decode()
    assert "Sign in to see the state of each component." in anonymous.content.decode()


@pytest.mark.django_db
def test_anonymous_callers_get_the_status_only():
    body = Client().get("/healthz").json()
    assert set(body) == {"status"} and body["status"] in ("ok", "degraded")


@pytest.mark.django_db
def test_the_report_is_computed_once_per_period_and_never_broadcasts_to_workers(settings, monkeypatch):
    """Anonymous /healthz used to ping every worker over the broker (about 1 s per call); now the
    report is cached for LEXTRACE_HEALTH_CACHE_SECONDS and the worker check reads heartbeats."""
    from django.core.cache import cache

    from apps.core import health
    from apps.core.operations import worker_alive_mark
    from worker.celery import app

    def no_broadcast(*args, **kwargs):
        raise AssertionError("a Celery broadcast from /healthz")

    monkeypatch.setattr(app.control, "ping", no_broadcast)
    settings.HEALTH_CACHE_S = 30
    cache.delete(health.CACHE_KEY)
    computed = []
    real = health.health_report
    monkeypatch.setattr(health, "health_report", lambda: computed.append(1) or real())
    worker_alive_mark("heartbeat-test@localhost")
    try:
        bodies = [Client().get("/healthz").json() for _ in range(20)]
        assert len(computed) == 1 and all(b == bodies[0] for b in bodies)
        checks = {c["name"]: c for c in health.health_report_cached()["checks"]}
        assert checks["worker"]["ok"] and "alive" in checks["worker"]["detail"]
        # Expired: one recomputation, by whichever request comes first.
        cache.set(health.CACHE_KEY, {**cache.get(health.CACHE_KEY), "at": 0}, timeout=60)
        Client().get("/healthz")
        assert len(computed) == 2
    finally:
        cache.delete(health.CACHE_KEY)


@pytest.mark.django_db
def test_worker_pings_are_throttled_per_user_and_leave_the_judgment_queue_alone(personas, settings,
                                                                              django_capture_on_commit_callbacks):
    from celery.signals import before_task_publish
    from django.core.cache import cache

    import time

    settings.HEALTH_PING_RATE = "3/hour"  # an hour: the window cannot roll over during the test
    routed = []

    def record(sender=None, routing_key=None, **kwargs):
        routed.append((sender, routing_key))

    before_task_publish.connect(record, weak=False)
    # A counter an earlier run left for a user of the same id.
    cache.delete_many([f"ping-rate:{u.pk}:{int(time.time() // 3600)}" for u in (personas.staff_a, personas.staff_b)])
    try:
        client, other = personas.client(personas.staff_a), personas.client(personas.staff_b)
        with django_capture_on_commit_callbacks(execute=True):  # the ping is sent once its row commits
            codes = [client.post("/health/pings/").status_code for _ in range(5)]
        assert codes[:3] == [302, 302, 302] and 429 in codes[3:], codes
        refused = client.post("/health/pings/")
        assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
        assert other.post("/health/pings/").status_code == 302  # per user
    finally:
        before_task_publish.disconnect(record)
    pings = [key for name, key in routed if name == "worker.tasks.worker_ping"]
    assert pings and set(pings) == {settings.HEALTH_PING_QUEUE} and settings.HEALTH_PING_QUEUE != "default"


@pytest.mark.django_db
def test_healthz_says_down_when_the_broker_is_unreachable(client, settings, monkeypatch):
    from worker.celery import app

    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    body = client.get("/healthz")
    assert body.status_code == 503
    data = body.json()
    assert data["status"] == "down"
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["broker"]["ok"] is False and checks["worker"]["detail"] == "broker down"


def _checks(client):
    response = client.get("/healthz")
    return response, {c["name"]: c for c in response.json()["checks"]}


@pytest.mark.django_db
def test_healthz_reports_the_model_circuit_without_naming_the_server(client, settings):
    from apps.core.operations import model_circuit

    _response, checks = _checks(client)
    assert checks["model"]["ok"] and "statistical" in checks["model"]["detail"]  # no LLM configured

    settings.LLM_BASE_URL = "http://127.0.0.1:1/v1"
    circuit = model_circuit()
    circuit.reset()
    try:
        _response, checks = _checks(client)
        assert checks["model"] == {"name": "model", "ok": True, "detail": "circuit closed"}
        for _ in range(circuit.fail_max):
            circuit.record_failure()
        response, checks = _checks(client)
        assert checks["model"]["ok"] is False and checks["model"]["detail"] == "circuit open"
        # A model outage degrades the service; it does not take it down.
        assert response.status_code == 200 and response.json()["status"] == "degraded"
        assert "127.0.0.1:1" not in response.content.decode()
    finally:
        circuit.reset()


@pytest.mark.django_db
def test_healthz_alerts_on_deliveries_unacknowledged_beyond_the_bound(client, settings):
    """D2: an entry in kombu's unacked index older than visibility timeout + sweep is reported."""
    import time

    import redis

    from apps.core.operations import UNACKED_INDEX_KEY, redelivery_bound_s

    # A broker database of its own on the same Redis server, so no worker's sweep sees these entries.
    settings.CELERY_BROKER_URL = settings.REDIS_URL.rsplit("/", 1)[0] + "/13"
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete(UNACKED_INDEX_KEY)
    try:
        now = time.time()
        broker.zadd(UNACKED_INDEX_KEY, {"fresh-tag": now - 1})
        _response, checks = _checks(client)
        assert checks["redelivery"]["ok"], checks["redelivery"]
        broker.zadd(UNACKED_INDEX_KEY, {"old-tag": now - redelivery_bound_s() - 120,
                                        "older-tag": now - redelivery_bound_s() - 600})
        response, checks = _checks(client)
        assert checks["redelivery"]["ok"] is False
        assert checks["redelivery"]["detail"].startswith("2 unacknowledged beyond")
        assert response.json()["status"] == "degraded"
    finally:
        broker.delete(UNACKED_INDEX_KEY)
