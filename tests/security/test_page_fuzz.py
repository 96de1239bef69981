"""Hypothesis over every query parameter of the htmx pages: no value makes a page answer 5xx.

Nothing is listed by hand. The pages are every GET route of the site (the URL resolver; the REST
API is schemathesis's, tests/cases/test_api_fuzz.py; the Django admin is not ours), their ids
filled with real objects of the fixture (a judged case and run, an evaluation run, a team…) and
opened by each role until one may see them. Their query parameters are the ones the view
actually reads: the probe request records every key looked up in ``request.GET`` (a view's
``.get``, a bound filter form's fields, a paginator's ``page``), so a parameter added to a view
is fuzzed from then on. Each page then gets FUZZ_EXAMPLES derandomised examples: any subset of its
parameters, each with hostile values (NUL, other control characters, digits that ``int()``
refuses, numbers beyond bigint, very long and markup-laden text), plus one parameter no view reads.
"""

import re
import time

import pytest
from django.core.handlers.wsgi import WSGIRequest
from django.http import QueryDict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.evaluation.models import EvaluationRun
from tests.cases.conftest import judged_run, judging_corpus  # noqa: F401
from tests.test_url_access import ROUTES

pytestmark = pytest.mark.django_db
FUZZ_EXAMPLES = 12
HOSTILE = ["", "0", "-1", "1.5", "²", "٣", "１", str(2**63), str(10**40), "\x00", "a\x00b", "\x1f\x7f", "\u202e",
           "<script>alert(1)</script>", "' OR '1'='1", "../../etc/passwd", "%00", "null", "true", "x" * 3000,
           "pending", "all", "me", "C1", "264", "264-1", "2018-09-14", "9999-99-99"]
VALUES = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40), st.integers().map(str))
SKIP = re.compile(r"^(admin/|api/|i18n/|accounts/(login|logout|second-factor))")


class RecordingQueryDict(QueryDict):
    seen: set[str] = set()

    def get(self, key, default=None):
        RecordingQueryDict.seen.add(key)
        return super().get(key, default)

    def getlist(self, key, default=None):
        RecordingQueryDict.seen.add(key)
        return super().getlist(key, default)

    def __getitem__(self, key):
        RecordingQueryDict.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        RecordingQueryDict.seen.add(key)
        return super().__contains__(key)


def _recording_get(self):
    return RecordingQueryDict(self.environ.get("QUERY_STRING", ""))


def pages(personas, ids) -> list[tuple[str, str, list[str]]]:
    """(path, role, parameters read) of every GET page some role can open."""
    found = []
    clients = {role: personas.client(getattr(personas, role)) for role in ("staff_a", "reviewer", "admin")}
    for route in ROUTES:
        if SKIP.match(route) or "<str:" in route or "<path:" in route or "(?P" in route:
            continue
        candidates = [route] if "<" not in route else [re.sub(r"<int:[^>]+>", str(i), route) for i in ids]
        for candidate in candidates:
            path = "/" + candidate
            for role, client in clients.items():
                RecordingQueryDict.seen = set()
                response = client.get(path)
                assert response.status_code < 500, (path, role, response.status_code)
                if response.status_code == 200:
                    found.append((path, role, sorted(RecordingQueryDict.seen)))
                    break
            else:
                continue
            break
    return found


def test_no_query_parameter_of_any_page_makes_it_fail(personas, judged_run, monkeypatch, capsys):  # noqa: F811
    # Failed (a done run always has metrics; this one has none): its page and filters still open.
    evaluation = EvaluationRun.objects.create(label="fuzz", dataset="d.jsonl", dataset_sha256="0" * 64,
                                              dataset_path="/nonexistent", status=EvaluationRun.Status.FAILED)
    ids = sorted({judged_run.case_id, judged_run.pk, evaluation.pk, personas.team_a.pk})
    monkeypatch.setattr(WSGIRequest, "GET", property(_recording_get))
    found = pages(personas, ids)
    paths = {path for path, _role, _params in found}
    # The walk reached the pages that read parameters (a broken walk would pass vacuously).
    for expected in ("/cases/", "/review/", "/audit/", "/graph/explore/", f"/review/runs/{judged_run.pk}/",
                     f"/evaluation/{evaluation.pk}/"):
        assert expected in paths, (expected, sorted(paths))
    read = {path: params for path, _role, params in found}
    assert {"q", "status", "team", "page"} <= set(read["/review/"]) and "object_id" in read["/audit/"]
    clients = {role: personas.client(getattr(personas, role)) for role in ("staff_a", "reviewer", "admin")}
    requests = []
    started = time.monotonic()

    def fuzz(path: str, role: str, keys: list[str]):
        @settings(max_examples=FUZZ_EXAMPLES, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.fixed_dictionaries({}, optional={k: st.one_of(VALUES, st.lists(VALUES, max_size=3)) for k in keys}))
        def check(query):
            requests.append(path)
            response = clients[role].get(path, query)
            assert response.status_code < 500, (path, role, query, response.status_code)

        check()

    for path, role, params in found:
        fuzz(path, role, [*params, "unread_param"])
    with capsys.disabled():
        print(f"\npage fuzz: {len(found)} pages, {sum(len(p) for _, _, p in found)} parameters, "
              f"{len(requests)} requests in {time.monotonic() - started:.1f} s, no 5xx")
        for path, role, params in found:
            if params:
                print(f"  {path} ({role}): {', '.join(params)}")
