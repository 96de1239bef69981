"""I2: a double submit with the same Idempotency-Key gives one case."""

import threading
import time
import uuid

import pytest

from apps.cases.models import Case
from apps.cases.services.idempotency import idempotent_create
from tests.cases.conftest import demo_case
from tests.conftest import api_token_for


@pytest.fixture
def api(personas):
    token = api_token_for(personas.staff_a)
    return personas.client(HTTP_AUTHORIZATION=f"Token {token}")


def payload(team):
    record = demo_case()
    return {"team": team.pk, "title": "double", "facts": record["fact"], "offence_date": "2018-09-14",
            "defendants": record["defendants"]}


def test_the_same_key_twice_gives_one_case_and_the_second_answer_says_so(api, personas):
    key = uuid.uuid4().hex
    first = api.post("/api/v1/cases/", payload(personas.team_a), content_type="application/json",
                     HTTP_IDEMPOTENCY_KEY=key)
    second = api.post("/api/v1/cases/", payload(personas.team_a), content_type="application/json",
                      HTTP_IDEMPOTENCY_KEY=key)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"] and second.headers["Idempotent-Replayed"] == "true"
    assert Case.objects.filter(title="double").count() == 1
    # Another key, or none, is another case.
    third = api.post("/api/v1/cases/", payload(personas.team_a), content_type="application/json",
                     HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)
    fourth = api.post("/api/v1/cases/", payload(personas.team_a), content_type="application/json")
    assert third.status_code == fourth.status_code == 201
    assert Case.objects.filter(title="double").count() == 3


def test_an_overlong_key_is_a_400(api, personas):
    response = api.post("/api/v1/cases/", payload(personas.team_a), content_type="application/json",
                        HTTP_IDEMPOTENCY_KEY="k" * 101)
    assert response.status_code == 400 and "Idempotency-Key" in response.json()


def test_concurrent_requests_with_one_key_create_once():
    key, made, results = uuid.uuid4().hex, [], []

    def create():
        time.sleep(0.3)  # the first request is still creating when the others arrive
        made.append(1)
        return 4242

    def request():
        results.append(idempotent_create(user_id=1, scope="test", key=key, create=create))

    threads = [threading.Thread(target=request) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1
    assert sorted(results) == [(4242, False)] * 7 + [(4242, True)]


def test_a_failed_first_request_lets_the_key_be_used_again():
    key = uuid.uuid4().hex

    def boom():
        raise RuntimeError("database down")

    with pytest.raises(RuntimeError):
        idempotent_create(user_id=1, scope="test", key=key, create=boom)
    assert idempotent_create(user_id=1, scope="test", key=key, create=lambda: 7) == (7, True)
