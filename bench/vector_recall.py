"""Recall@10 of the pgvector HNSW index against an exact scan, over the full precedent corpus.

Both searches run side by side on the same 200 query vectors (facts of
../shared/data/eval/cail_dev.jsonl, embedded with the active model); also
reports the time ratio exact / HNSW.

Run:  make bench-search   (after `make bench-import`; uses lextrace_bench)
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from apps.corpus.models import Precedent, SearchIndex  # noqa: E402
from apps.corpus.search_service import dense_search_vector, query_vector  # noqa: E402
from apps.corpus.services.indexing import search_indexes_build  # noqa: E402

SHARED = Path(os.environ.get("LEXTRACE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
QUERIES, K = 200, 10


def main() -> None:
    if connection.settings_dict["NAME"] != "lextrace_bench" or Precedent.objects.count() < 10000:
        sys.exit("run through `make bench-search` after `make bench-import`")
    t = time.perf_counter()
    if not SearchIndex.objects.filter(target="precedents", method="dense", active=True).exists():
        search_indexes_build()
        print(f"built the search indexes in {time.perf_counter() - t:.1f} s")
    facts = [json.loads(line)["fact"] for line in (SHARED / "eval" / "cail_dev.jsonl").open(encoding="utf-8")][:QUERIES]
    recalls, t_hnsw, t_exact = [], [], []
    for fact in facts:
        index, vector = query_vector(target="precedents", query=fact)
        t0 = time.perf_counter()
        approx = {pk for pk, _ in dense_search_vector(index, vector, k=K)}
        t1 = time.perf_counter()
        exact = {pk for pk, _ in dense_search_vector(index, vector, k=K, exact=True)}
        t2 = time.perf_counter()
        recalls.append(len(approx & exact) / K)
        t_hnsw.append(t1 - t0)
        t_exact.append(t2 - t1)
    print(f"index {index.model_id} over {index.documents} precedents, dim {index.dim}")
    print(f"recall@{K} of HNSW vs exact scan over {len(facts)} queries: mean {statistics.mean(recalls):.4f}, "
          f"min {min(recalls):.2f}")
    print(f"median latency: HNSW {statistics.median(t_hnsw) * 1000:.2f} ms, exact {statistics.median(t_exact) * 1000:.2f} ms, "
          f"ratio exact / HNSW {statistics.median(t_exact) / statistics.median(t_hnsw):.1f}x")


if __name__ == "__main__":
    main()
