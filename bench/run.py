"""The performance suite (issue 12): P1–P9, each measured side by side with its baseline.

    . scripts/env.sh && python bench/run.py                 # all, on lextrace_bench (+ lextrace_p1 scratch)
    python bench/run.py p3 p7                               # some of them (p4 and p5 run together)
    python bench/run.py --tiny --scratch-db NAME            # CI size: demo corpus, a few repeats
    make bench   /   make bench-p3   /   make bench-tiny

Each benchmark runs in its own process (``--child``) on the database it needs:
P2–P7 read the full benchmark database (``--db``, default lextrace_bench, never
written); P1 drops and rebuilds the scratch database (``--scratch-db``, default
lextrace_p1) and P8/P9 write to it (users, cases, runs). In ``--tiny`` mode every
benchmark uses the scratch database with the bundled demo corpus. Prints a table and
writes JSON (default .local/bench/results-<date>.json). Times are reported, never
asserted: the exit status is non-zero only when a benchmark could not run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import Context, connect, database_exists, database_recreate, machine, manage

# name -> (module, which database it connects to)
BENCHMARKS = {
    "p1": ("bench.p1_indexing", "scratch"),
    "p2": ("bench.p2_retrieval", "db"),
    "p3": ("bench.p3_pipeline", "db"),
    "p4": ("bench.p45_llm_cost", "db"),
    "p5": ("bench.p45_llm_cost", "db"),
    "p6": ("bench.p6_bm25", "db"),
    "p7": ("bench.p7_graph_vector", "db"),
    "p8": ("bench.p8_web", "scratch"),
    "p9": ("bench.p9_celery", "scratch"),
}


def _selected(names: list[str]) -> list[str]:
    wanted = set(BENCHMARKS) if not names or "all" in names else {n.lower() for n in names}
    unknown = wanted - set(BENCHMARKS)
    if unknown:
        sys.exit(f"unknown benchmark(s) {', '.join(sorted(unknown))}; choose from {', '.join(BENCHMARKS)} or all")
    modules = []
    for name in BENCHMARKS:  # suite order; p4/p5 share one module
        if name in wanted and BENCHMARKS[name][0] not in modules:
            modules.append(BENCHMARKS[name][0])
    return modules


def _scratch_ready(ctx: Context) -> bool:
    import psycopg

    if not database_exists(ctx.scratch_db):
        return False
    try:
        with connect(ctx.scratch_db) as conn:
            return bool(conn.execute("SELECT count(*) FROM graph_graphbuild WHERE status = 'done'").fetchone()[0])
    except psycopg.Error:
        return False


def scratch_prepare(ctx: Context) -> None:
    """Corpus, indexes and graph in the scratch database, when P8/P9 run without P1 before them."""
    if _scratch_ready(ctx):
        manage("migrate", "--noinput", "-v0", db=ctx.scratch_db)
        return
    print(f"preparing {ctx.scratch_db} (corpus {ctx.corpus_dir}, indexes, graph)", flush=True)
    database_recreate(ctx.scratch_db, protected=() if ctx.tiny else (ctx.db,))
    manage("import_corpus", str(ctx.corpus_dir), "--no-progress", db=ctx.scratch_db)
    manage("build_search_indexes", db=ctx.scratch_db)
    manage("build_graph", db=ctx.scratch_db)


def child(module: str, ctx: Context, out: Path) -> None:
    from bench.common import django_setup

    django_setup()
    rows = importlib.import_module(module).run(ctx)
    out.write_text(json.dumps(rows, ensure_ascii=False, indent=1, default=str), encoding="utf-8")


def _fmt(value, unit: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def table(rows: list[dict]) -> str:
    lines = [f"{'':<4} {'figure':<58} {'value':>12} {'baseline':>12} {'ratio':>7}  goals"]
    for r in rows:
        marks = ", ".join(f"{g['goal']}: {'met' if g['met'] else 'NOT met' if g['met'] is False else 'n/a'}"
                          for g in r["goals"])
        lines.append(f"{r['key']:<4} {r['figure'][:58]:<58} {_fmt(r['value'], r['unit']):>12} "
                     f"{_fmt(r['baseline_value'], r['unit']):>12} {_fmt(r['ratio']):>7}  {marks}")
    return "\n".join(lines)


def markdown(report: dict) -> str:
    """The results as a Markdown table (for docs/PERFORMANCE.md)."""
    def cell(value, unit=""):
        return _fmt(value, unit).replace("|", "/")

    lines = ["| | figure | value | spread | baseline (same run) | baseline value | ratio | goals |",
             "|---|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        s = r.get("stats") or {}
        spread_text = (f"p90 {cell(s.get('p90'))}, IQR {cell(s.get('iqr'))}, n {s['n']}" if "p90" in s
                       else f"n {s['n']}" if s else "")
        goals = "; ".join(f"{g['goal']}: **{'met' if g['met'] else 'not met' if g['met'] is False else 'n/a'}**"
                          for g in r["goals"])
        lines.append(f"| {r['key']} | {r['figure']} | {cell(r['value'], r['unit'])} | {spread_text} | {r['baseline']} | "
                     f"{cell(r['baseline_value'], r['unit'])} | {cell(r['ratio'])} | {goals} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("benchmarks", nargs="*", help="p1 … p9 or all (default)")
    ap.add_argument("--tiny", action="store_true", help="CI size on the scratch database with the demo corpus")
    ap.add_argument("--db", default=os.environ.get("BENCH_DB", "lextrace_bench"))
    ap.add_argument("--scratch-db", default=os.environ.get("BENCH_SCRATCH_DB", "lextrace_p1"))
    ap.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:63799/5"))
    ap.add_argument("--json", type=Path, help="where to write the results (default .local/bench/results-<date>.json)")
    ap.add_argument("--render", type=Path, help="print the results of a JSON file as a Markdown table and exit")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.render:
        print(markdown(json.loads(args.render.read_text(encoding="utf-8"))))
        return 0
    db = args.scratch_db if args.tiny else args.db
    if not args.tiny and db == args.scratch_db:
        sys.exit("the scratch database must differ from the benchmark database (P1 drops it)")
    ctx = Context(tiny=args.tiny, db=db, scratch_db=args.scratch_db, redis_url=args.redis_url)
    if args.child:
        child(args.child, ctx, args.out)
        return 0

    started = dt.datetime.now(dt.UTC)
    modules = _selected(args.benchmarks)
    report = {"date": started.isoformat(timespec="seconds"), "machine": machine(), "tiny": args.tiny,
              "command": "python bench/run.py " + " ".join(sys.argv[1:]),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                       text=True, check=False).stdout.strip(),
              "databases": {"read_only": ctx.db, "scratch": ctx.scratch_db}, "results": [], "errors": {},
              "wall_s": {}, "load_average": {}}
    print(f"# Lextrace benchmarks {report['date']} — {report['machine']}", flush=True)
    prepared = False
    for module in modules:
        scratch = any(BENCHMARKS[n] == (module, "scratch") for n in BENCHMARKS)
        if module in ("bench.p8_web", "bench.p9_celery") or (args.tiny and module != "bench.p1_indexing"):
            if not prepared and "bench.p1_indexing" not in modules[: modules.index(module)]:
                scratch_prepare(ctx)
            prepared = True
        if module == "bench.p1_indexing":
            prepared = True
        # Every message of the suite goes to the benchmark broker, never to the dev worker's queue.
        env = {**os.environ, "DB_NAME": ctx.scratch_db if scratch or args.tiny else ctx.db, "CELERY_BROKER_URL": ctx.redis_url}
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
            out = Path(fh.name)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", module, "--out", str(out),
               "--db", args.db, "--scratch-db", args.scratch_db, "--redis-url", args.redis_url] + (["--tiny"] if args.tiny else [])
        print(f"\n## {module} (database {env['DB_NAME']})", flush=True)
        t = time.perf_counter()
        load_before = os.getloadavg()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, check=False)
        report["wall_s"][module] = round(time.perf_counter() - t, 1)
        # The 1-minute load average before and after each benchmark: a figure measured on a loaded
        # machine must say so beside it.
        report["load_average"][module] = {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)}
        print(f"load average (1 min): {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after", flush=True)
        if proc.returncode == 0 and out.stat().st_size:
            rows = json.loads(out.read_text(encoding="utf-8"))
            report["results"].extend(rows)
            print(table(rows), flush=True)
        else:
            report["errors"][module] = f"exit status {proc.returncode}"
        out.unlink(missing_ok=True)

    path = args.json or ROOT / ".local" / "bench" / f"results-{started:%Y%m%d-%H%M%S}{'-tiny' if args.tiny else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    print(f"\n# summary\n{table(report['results'])}")
    if report["errors"]:
        print(f"\nfailed: {report['errors']}")
    print(f"\nwritten: {path}")
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
