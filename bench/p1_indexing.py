"""P1: indexing the whole corpus on this machine (2 cores), without LLM or neural-embedding inference.

Figure: wall time of the three commands an operator runs on an empty database,
``import_corpus DIR && build_search_indexes && build_graph`` (import, BM25 and
LSA indexes with their HNSW graphs, ontology features, kNN, Leiden, AGE projection).
Baseline, same run: the sum of its component benchmarks, each service called
alone in-process on a fresh database — corpus import (per file), search-index build,
graph build (with its stage timings). Goals: whole ≤ 300 s and ≤ 1.3× the sum.

Uses the scratch database (``--scratch-db``, default lextrace_p1), dropped and
rebuilt twice; it is left holding the corpus, indexes and graph (P8 and P9 use it).
Full: ../shared/data; tiny: the demo corpus. One repetition per arm (a full
rebuild takes minutes); the spread of repeated runs is in docs/PERFORMANCE.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.common import ROOT, Context, bm25_artefacts_drop, database_drop, database_recreate, goal, row, timed


def _fresh(ctx: Context, template: str) -> None:
    """The scratch database, empty and migrated (a copy of ``template``: migrating twice would cost more than P1 tiny)."""
    from django.db import connection

    connection.close()
    bm25_artefacts_drop(ctx.scratch_db)
    database_recreate(ctx.scratch_db, protected=(ctx.db,) if ctx.db != ctx.scratch_db else (), template=template)


def run(ctx: Context) -> list[dict]:
    from django.db import connection

    from apps.corpus.models import Precedent
    from apps.corpus.services.importing import corpus_import, directory_files, parse_upload
    from apps.corpus.services.indexing import search_indexes_build
    from apps.graph.services.building import graph_build

    if connection.settings_dict["NAME"] != ctx.scratch_db:
        raise RuntimeError("P1 must run connected to the scratch database")
    corpus = ctx.corpus_dir

    template = f"{ctx.scratch_db}_empty"
    database_recreate(template)

    # -- components, each alone ------------------------------------------------------------
    _fresh(ctx, template)
    files = directory_files(corpus)
    t0 = time.perf_counter()
    for f in files:  # the floor any importer pays: read and validate, write nothing
        parse_upload(f.read_bytes(), f.name)
    read_validate_s = time.perf_counter() - t0
    per_file = {}
    t0 = time.perf_counter()
    for f in files:
        batch, seconds = timed(corpus_import, data=f.read_bytes(), filename=f.name)
        if batch.status != "published":
            raise RuntimeError(f"import of {f.name} failed: {batch.errors[:3]}")
        per_file[f.name] = round(seconds, 3)
    import_s = time.perf_counter() - t0
    cases = Precedent.objects.count()
    _, indexes_s = timed(search_indexes_build)
    build, graph_s = timed(graph_build)
    components = {"import": import_s, "search_indexes": indexes_s, "graph": graph_s}
    component_sum = sum(components.values())

    # -- the whole, as an operator runs it ---------------------------------------------------
    _fresh(ctx, template)
    database_drop(template)
    py = sys.executable
    script = (f'"{py}" manage.py import_corpus "{corpus}" --no-progress >/dev/null && '
              f'"{py}" manage.py build_search_indexes >/dev/null && "{py}" manage.py build_graph >/dev/null')
    env = {**os.environ, "DB_NAME": ctx.scratch_db}
    t = time.perf_counter()
    subprocess.run(["sh", "-c", script], cwd=ROOT, env=env, check=True, timeout=3600)
    whole_s = time.perf_counter() - t
    connection.close()
    ratio = whole_s / component_sum
    limit_s = 300.0
    return [row(
        "P1", f"index the whole corpus ({cases} cases) from an empty database", whole_s, "s",
        baseline="sum of the component benchmarks (import + search indexes + graph build), same run",
        baseline_value=component_sum, ratio=ratio,
        goals=[goal(f"whole ≤ {limit_s:.0f} s", None if ctx.tiny else whole_s <= limit_s),
               goal("whole ≤ 1.3× sum of components", None if ctx.tiny else ratio <= 1.3)],
        details={"components_s": {k: round(v, 2) for k, v in components.items()},
                 "import_per_file_s": per_file, "import_read_validate_only_s": round(read_validate_s, 2), "graph_stages_s": build.timings,
                 "corpus": str(corpus), "repetitions": 1},
    )]
