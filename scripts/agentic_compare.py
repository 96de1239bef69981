"""Fixed vs agentic retrieval mode, statistical strategy, side by side on the first N records of a labelled set.

    DB_NAME=lextrace_bench python scripts/agentic_compare.py ../shared/data/eval/cail_dev.jsonl 30 0 out.json

Arguments: the JSONL set, N, 1 for leave-one-out (--exclude-self, for held-out corpus cases) else 0,
the output JSON. Read-only: no evaluation rows are written (the predictions go through the same
record_predict / metrics code as `manage.py evaluate`, which would store them). Prints one line per
record and the metrics of each mode; the agentic mode adds steps, searches and planner calls per
defendant and the share of defendants whose loop a cap ended.
"""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
import django

django.setup()
from apps.evaluation import metrics
from apps.evaluation.services.evaluating import (
    _entry,
    agentic_metrics,
    charge_categories,
    dataset_read,
    gold_of,
    prediction_of,
    record_predict,
)

path, n, exclude_self = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
records = dataset_read(path.read_bytes(), name=path.name)[:n]
out = {}
for mode in ("fixed", "agentic"):
    entries, preds, secs = [], [], []
    t0 = time.perf_counter()
    for r in records:
        result = record_predict(r, strategy="statistical", ablation="full", exclude_self=exclude_self, mode=mode)
        p = prediction_of(result)
        preds.append(p)
        entries.append(_entry(r["id"], gold_of(r), p))
        secs += [d["seconds"] for d in p.get("defendants") or []]
        print(mode, len(preds), p["status"], p["charges"], r["charges"], flush=True)
    m = metrics.evaluate(entries, charge_categories())
    secs.sort()
    row = {"cases": len(records), "charge_acc": m["charges"]["accuracy"], "charge_f1": m["charges"]["micro_f1"],
           "article_acc": m["articles"]["accuracy"], "article_f1": m["articles"]["micro_f1"],
           "term_mae": m["term"]["mae"], "traceable": m["traceable_correct"], "untraceable": m["untraceable_correct"],
           "status": m["status"], "p50_s_per_defendant": secs[len(secs) // 2] if secs else None,
           "wall_s": round(time.perf_counter() - t0, 1), "recall_candidates": m.get("retrieval", {}).get("recall_candidates"),
           "recall_verified": m.get("retrieval", {}).get("recall_verified")}
    if mode == "agentic":
        row["agentic"] = agentic_metrics(preds)
    out[mode] = row
    print(mode, json.dumps(row, ensure_ascii=False), flush=True)
Path(sys.argv[4]).write_text(json.dumps(out, ensure_ascii=False, indent=1))
