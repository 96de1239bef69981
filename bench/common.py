"""Shared pieces of the benchmark suite (bench/run.py): sizes, statistics, databases, result rows.

Every benchmark module ``bench/pN_*.py`` has ``run(ctx) -> list[dict]``: one row per
figure, built with :func:`row`. A row names its baseline, which the benchmark measures
side by side in the same run; the ratio figure / baseline is what the goals speak about.
Times are reported, never asserted.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = ROOT / "apps" / "corpus" / "demo"


def shared_data_dir() -> Path:
    return Path(os.environ.get("LEXTRACE_SHARED_DATA", ROOT.parent / "shared" / "data"))


@dataclass(frozen=True)
class Context:
    """What one benchmark process needs to know about the run."""

    tiny: bool
    db: str  # read-only database with the full corpus, indexes, graph and models
    scratch_db: str  # database the benchmark may drop and rebuild (P1) or write to (P8, P9)
    redis_url: str  # broker for P9 (a database number of its own)

    @property
    def corpus_dir(self) -> Path:
        return DEMO_CORPUS if self.tiny else shared_data_dir()

    def size(self, full: int, tiny: int) -> int:
        return tiny if self.tiny else full

    def eval_cases(self, n: int) -> list[dict]:
        """Cases to judge: eval/smoke.jsonl, then eval/cail_dev.jsonl (full), or the demo corpus cases (tiny)."""
        if self.tiny:
            return read_jsonl(DEMO_CORPUS / "cases.jsonl")[:n]
        seen, out = set(), []
        for name in ("smoke.jsonl", "cail_dev.jsonl"):  # smoke.jsonl is a subset of cail_dev.jsonl
            for record in read_jsonl(shared_data_dir() / "eval" / name):
                if record["id"] not in seen and len(out) < n:
                    seen.add(record["id"])
                    out.append(record)
        return out


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def django_setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
    import django

    django.setup()


def spread(values: list[float]) -> dict:
    """Median and spread of repeated measurements (p90 and IQR need at least 2 values)."""
    values = sorted(float(v) for v in values)
    out = {"n": len(values), "p50": statistics.median(values), "min": values[0], "max": values[-1]}
    if len(values) >= 2:
        q = statistics.quantiles(values, n=100, method="inclusive")
        out.update(p90=q[89], p99=q[98], iqr=q[74] - q[24])
    return out


def timed(fn, *args, **kwargs) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def goal(text: str, met: bool | None, why: str = "") -> dict:
    """One goal of the issue; ``met`` None when the run cannot tell (e.g. tiny mode)."""
    return {"goal": text, "met": met, "why": why}


def row(key: str, figure: str, value: float | None, unit: str, *, baseline: str, baseline_value: float | None,
        goals: list[dict], ratio: float | None = None, stats: dict | None = None,
        baseline_stats: dict | None = None, details: dict | None = None) -> dict:
    if ratio is None and baseline_value and value is not None:
        ratio = value / baseline_value
    return {"key": key, "figure": figure, "value": value, "unit": unit, "baseline": baseline,
            "baseline_value": baseline_value, "ratio": ratio, "goals": goals, "stats": stats,
            "baseline_stats": baseline_stats, "details": details or {}}


# -- databases ---------------------------------------------------------------------------------

def _owner_env() -> dict:
    """The owner role's credentials (docs/OPERATIONS.md, "Database roles"): creating, dropping and
    migrating the benchmark databases is the owner's; the benchmarks themselves run as the app role."""
    user = os.environ.get("DB_OWNER_USER") or os.environ.get("DB_USER", "lextrace")
    password = os.environ.get("DB_OWNER_PASSWORD") if os.environ.get("DB_OWNER_USER") else os.environ.get("DB_PASSWORD")
    return {"DB_USER": user, "DB_PASSWORD": password or ""}


def connect(dbname: str = "postgres"):
    """A plain connection as the owner role (it may create databases); ``postgres`` for maintenance."""
    import psycopg

    owner = _owner_env()
    return psycopg.connect(host=os.environ.get("DB_HOST", "127.0.0.1"), port=int(os.environ.get("DB_PORT", "54329")),
                           user=owner["DB_USER"], password=owner["DB_PASSWORD"], dbname=dbname, autocommit=True)


def _check_name(name: str) -> str:
    if not name.replace("_", "").isalnum() or not name[0].isalpha() or name != name.lower():
        raise ValueError(f"invalid database name {name!r}")
    return name


def database_recreate(name: str, *, protected: tuple[str, ...] = (), template: str | None = None) -> None:
    """Drop ``name`` (forcing other sessions out) and create it: a copy of ``template`` (a migrated,
    empty database), or empty and then migrated."""
    name = _check_name(name)
    if name in protected:
        raise RuntimeError(f"refusing to drop {name}: it is the shared benchmark database")
    with connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{_check_name(template)}"' if template else ""))
    if not template:
        manage("migrate", "--noinput", "-v0", db=name)


def database_drop(name: str) -> None:
    with connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{_check_name(name)}" WITH (FORCE)')


def bm25_artefacts_drop(name: str) -> int:
    """Delete the BM25 artefact directories database ``name`` points at (before it is dropped).

    LSA models are content-addressed and may be shared with other databases: they stay."""
    import shutil

    import psycopg

    if not database_exists(name):
        return 0
    try:
        with connect(name) as conn:
            dirs = [r[0] for r in conn.execute("SELECT artefact_dir FROM corpus_searchindex WHERE method = 'bm25'")]
    except psycopg.Error:
        return 0
    removed = 0
    for d in dirs:
        path = Path(d)
        if d and path.parent.name == "indexes" and path.name.startswith("bm25-") and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def database_exists(name: str) -> bool:
    with connect() as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [_check_name(name)]).fetchone() is not None


def manage(*args: str, db: str, env: dict | None = None, timeout: float = 3600) -> float:
    """Run ``manage.py args`` on database ``db``; returns its wall time. Raises on failure.
    ``migrate`` runs as the owner role, which then grants the app role its privileges."""
    if args and args[0] == "migrate":
        env = {**_owner_env(), **(env or {})}
    t = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, check=True, timeout=timeout,
                   env={**os.environ, **(env or {}), "DB_NAME": db}, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def process_stop(proc: subprocess.Popen, timeout: float = 30) -> None:
    """Stop a server the benchmark started (gunicorn, a Celery worker): TERM, then KILL."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def machine() -> str:
    import platform

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        load = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        load = ""
    return f"{platform.platform()}, {platform.python_version()}, {cores} cores usable, {load}"
