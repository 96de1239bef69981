"""P8's endpoints one at a time, in this process: server time, SQL queries and where the time goes.

    . scripts/env.sh && DB_NAME=lextrace_p1 python bench/p8_profile.py            # every endpoint
    DB_NAME=lextrace_p1 python bench/p8_profile.py --only "review item Accept" --profile 25

A single client through Django's test client (the whole middleware stack, no gunicorn, no
network), on the scratch database P8 prepared (``bench/run.py p8`` creates its users, the case
and the review runs once). For each endpoint: the median and the 90th percentile of ``--repeat``
requests (wall time, and the median CPU time of this process), the SQL queries of one request (count
and their time), and with ``--profile N`` the N functions with the largest cumulative time (cProfile;
PROFILE_SORT=tottime for the time spent in each function itself) over the repeats. This is the tool to find
where an endpoint spends its time; P8 itself (8 clients, gunicorn) is the figure to report.
The review actions write (Accept, Override with its what-if), as P8's do.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
    os.environ["LEXTRACE_OTP_ROLES"] = ""  # as P8: the reviewer signs in with a password alone
    os.environ["DJANGO_ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
    import django

    django.setup()


def _fixture() -> dict:
    """The objects P8's fixture created (never creates them: run ``bench/run.py p8`` once first)."""
    from apps.cases.models import JudgmentRun
    from apps.review.selectors import reviewable_refs
    from bench.p8_web import REVIEW_CASE_TITLE

    from apps.accounts.models import User

    team = User.objects.get(username="clerk_a").teams.first()
    # As P8's fixture picks it: the team's first finished run.
    run = JudgmentRun.objects.filter(case__team=team, status=JudgmentRun.Status.DONE).order_by("pk").first()
    if run is None:
        sys.exit("no P8 fixture in this database: run `python bench/run.py p8` once (DB_NAME = its scratch database)")
    review_run = JudgmentRun.objects.filter(case__team=team, case__title=REVIEW_CASE_TITLE,
                                            status=JudgmentRun.Status.DONE).order_by("pk").first()
    out = {"case": run.case_id, "run": run.pk, "review": None}
    if review_run is not None:
        result = review_run.results.order_by("position").first()
        refs = reviewable_refs(result.bundle or {})
        items = [r for r in refs if r[0] == "item"] or refs
        out["review"] = {"run": review_run.pk, "position": result.position, "target": items[0][0], "ref": items[0][1]}
    return out


def _requests(f: dict) -> list[tuple[str, str, str, dict, dict | None]]:
    """(label, who, path, headers, POST data or None): P8's endpoints and review actions."""
    from bench.p8_web import OVERRIDE_REASON, _endpoints

    out = [(label, "clerk_a", path, headers, None) for _kind, label, path, headers in _endpoints(f)]
    r = f["review"]
    if r:
        htmx = {"HX-Request": "true"}
        form = {"position": r["position"], "target": r["target"], "ref": r["ref"]}
        out += [("review page", "reviewer", f"/review/runs/{r['run']}/", {}, None),
                ("review item Accept", "reviewer", f"/review/runs/{r['run']}/items/", htmx,
                 {**form, "action": "accept"}),
                ("review item Override (what-if)", "reviewer", f"/review/runs/{r['run']}/items/", htmx,
                 {**form, "action": "override", "value": "0", "reason": OVERRIDE_REASON})]
    return out


def _headers(headers: dict) -> dict:
    return {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", action="append", help="endpoint labels (substring), repeatable")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print the N top functions by cumulative time")
    ap.add_argument("--sql", action="store_true", help="print the SQL of one request, slowest first")
    ap.add_argument("--lang", default="zh-hans")
    args = ap.parse_args()
    _setup()

    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.accounts.models import User

    f = _fixture()
    clients = {}
    for who in ("clerk_a", "reviewer"):
        c = Client(HTTP_HOST="127.0.0.1")
        c.force_login(User.objects.get(username=who))
        c.cookies["django_language"] = args.lang
        clients[who] = c
    # cpu ms: this process's CPU time per request (the median), steadier than the wall time on a busy machine.
    print(f"{'endpoint':<40} {'p50 ms':>8} {'p90 ms':>8} {'cpu ms':>8} {'queries':>8} {'sql ms':>8} {'bytes':>9}")
    for label, who, path, headers, data in _requests(f):
        if args.only and not any(o.lower() in label.lower() for o in args.only):
            continue
        client = clients[who]

        def once():
            if data is None:
                return client.get(path, **_headers(headers))
            return client.post(path, data, **_headers(headers))

        response = once()  # warm
        if response.status_code not in (200, 286):
            print(f"{label:<40} answered {response.status_code}")
            continue
        reset_queries()  # the log of the previous endpoint (request_started clears it in the middle of the context)
        with CaptureQueriesContext(connection) as ctx:
            once()
        queries = list(ctx.captured_queries)  # read now: the next request clears the connection's log
        sql_ms = sum(float(q["time"]) for q in queries) * 1000
        profiler = cProfile.Profile() if args.profile else None
        times, cpu = [], []
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            if profiler:
                profiler.enable()
            response = once()
            if profiler:
                profiler.disable()
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
        print(f"{label:<40} {statistics.median(times):8.1f} {p90:8.1f} {statistics.median(cpu):8.1f} {len(queries):8d} "
              f"{sql_ms:8.1f} {len(response.content):9d}")
        if args.sql:
            for q in sorted(queries, key=lambda q: -float(q["time"])):
                print(f"    {float(q['time']) * 1000:7.2f} ms  {q['sql'][:300]}")
        if profiler:
            out = io.StringIO()
            order = os.environ.get("PROFILE_SORT", "cumulative")
            pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(args.profile)
            print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
