import pytest
from django.conf import settings


@pytest.mark.django_db
def test_healthz_reports_every_component_without_secrets(client):
    response = client.get("/healthz")
    body = response.json()
    names = [c["name"] for c in body["checks"]]
    assert names == ["database", "extensions", "broker", "worker"]
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
    for name in ("database", "extensions", "broker", "worker"):
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
