"""The benchmark suite still runs: `bench/run.py --tiny` on the demo corpus writes valid JSON for P1–P9.

Nothing here looks at a time (timed unit tests are not benchmarks; issue 12). The suite
runs in a subprocess against its own scratch database, <test database>_bench, on the test
broker (REDIS_URL of scripts/test.sh); it starts its own gunicorn (P8) and Celery worker (P9).
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from bench.common import bm25_artefacts_drop, database_drop

ROOT = Path(__file__).resolve().parents[2]
KEYS = {f"P{i}" for i in range(1, 10)}

pytestmark = [pytest.mark.slow, pytest.mark.worker, pytest.mark.age]


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory):
    scratch = settings.DATABASES["default"]["TEST"]["NAME"] + "_bench"
    out = tmp_path_factory.mktemp("bench") / "results.json"
    env = {**os.environ, "DB_NAME": scratch}
    # A broker database of its own: the suite's session worker (tests/conftest.py) listens on the
    # test broker and would take P9's tasks and run them against the wrong database.
    base, _, number = settings.CELERY_BROKER_URL.rpartition("/")
    broker = f"{base}/{(int(number or 0) + 3) % 16}"
    try:
        proc = subprocess.run(
            [sys.executable, "bench/run.py", "--tiny", "--scratch-db", scratch, "--redis-url", broker,
             "--json", str(out)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=540, check=False,
        )
    finally:
        bm25_artefacts_drop(scratch)
        database_drop(scratch)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8")), proc.stdout


def test_every_benchmark_ran_and_wrote_its_rows(tiny_report):
    report, stdout = tiny_report
    assert report["tiny"] is True and report["errors"] == {}
    assert {r["key"] for r in report["results"]} == KEYS
    for key in KEYS:
        assert f"\n{key} " in stdout  # the table printed every benchmark


def test_every_row_names_a_measured_baseline_and_its_goals(tiny_report):
    report, _ = tiny_report
    for r in report["results"]:
        assert r["baseline"], r["figure"]
        assert isinstance(r["value"], (int, float)) and math.isfinite(r["value"]), r["figure"]
        assert isinstance(r["baseline_value"], (int, float)) and r["baseline_value"] > 0, r["figure"]
        assert r["ratio"] is not None and math.isclose(r["ratio"], r["value"] / r["baseline_value"], rel_tol=1e-9), r["figure"]
        for g in r["goals"]:
            assert g["goal"] and g["met"] in (True, False, None)
        if r["stats"]:  # repeated measurements come with a median and a spread
            assert r["stats"]["n"] >= 2 and r["stats"]["min"] <= r["stats"]["p50"] <= r["stats"]["max"]
            assert "p90" in r["stats"] and "iqr" in r["stats"]


def test_the_side_by_side_arms_did_real_work(tiny_report):
    report, _ = tiny_report
    rows = {}
    for r in report["results"]:
        rows.setdefault(r["key"], []).append(r)
    [p1] = rows["P1"]
    assert set(p1["details"]["components_s"]) == {"import", "search_indexes", "graph"}
    assert p1["details"]["import_per_file_s"]  # every demo corpus file imported
    p4 = [r for r in rows["P4"] if r["details"]]
    assert p4 and sum(p4[0]["details"]["statuses"]["per-item"].values()) == p4[0]["details"]["defendants"]
    assert all(r["value"] >= 1 for r in rows["P4"])  # the stub counted LLM calls
    [p6] = rows["P6"]
    assert 0 <= p6["details"]["top10_agreement"] <= 1
    p8_paths = {r["details"].get("path") for r in rows["P8"]}
    assert {"/cases/", "/api/v1/cases/"} <= p8_paths
    assert all(r["value"] is not None for r in rows["P8"])  # every endpoint answered 200 and was measured
    [p9] = rows["P9"]
    # every case ran once inline and once through the worker, the first twice more to warm both sides
    assert p9["details"]["run_statuses"] == {"done": 2 * p9["details"]["cases"] + 2}
