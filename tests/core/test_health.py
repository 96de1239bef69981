import pytest
from django.conf import settings


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
    response = client.get("/health/")
    assert response.status_code == 200
    page = response.content.decode()
    for name in ("database", "extensions", "broker", "worker", "model", "redelivery"):
        assert name in page


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
