"""Wall time of importing all of ../shared/data into an empty database.

Baseline, measured side by side in the same run: reading and validating the
same files without writing anything (the floor any importer pays). The figure
that matters is the ratio import / baseline, and the absolute wall time on
this machine (2 cores).

Run:  make bench-import      (uses a scratch database, lextrace_bench)
"""

import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from apps.corpus.services.importing import corpus_import, directory_files, parse_upload  # noqa: E402

SHARED = Path(os.environ.get("LEXTRACE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> None:
    if connection.settings_dict["NAME"] != "lextrace_bench":
        sys.exit("run through `make bench-import` (it uses the scratch database lextrace_bench)")
    files = directory_files(SHARED)
    t0 = time.perf_counter()
    records = 0
    for f in files:
        kind, parsed = parse_upload(f.read_bytes(), f.name)
        records += len(parsed)
    parse_s = time.perf_counter() - t0

    rows = []
    t0 = time.perf_counter()
    for f in files:
        t = time.perf_counter()
        batch = corpus_import(data=f.read_bytes(), filename=f.name)
        assert batch.status == "published", (f.name, batch.errors[:3])
        rows.append((f.name, time.perf_counter() - t, batch.counts))
    import_s = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"corpus: {SHARED} ({records} records in {len(files)} files)")
    for name, seconds, counts in rows:
        print(f"  {name:<24} {seconds:7.2f} s  {counts}")
    print(f"baseline (read + validate only): {parse_s:7.2f} s")
    print(f"full import (validate + write):  {import_s:7.2f} s")
    print(f"ratio import / baseline:         {import_s / parse_s:7.2f}x")
    print(f"peak RSS:                        {rss:7.0f} MB")


if __name__ == "__main__":
    main()
