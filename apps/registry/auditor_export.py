"""The learned Auditor's training data: the real pipeline over training cases, with nothing they taught.

For a sample of the training cases, every stage runs as in a judgment (focus, features, the Researcher's
paths against the live graph and indexes, the element check), with two differences that keep the rows
honest: the charge and article classifiers are the out-of-fold models that never saw the case
(training.statistical writes them under ``<out>/folds``), and retrieval is leave-one-out (the case's own
precedent and the records merged into it are never retrieved). Each in-force candidate article becomes
one row of worker.agents.stages.auditor.signals signals with its label (a gold article of the case, or of the
defendant where the corpus labels defendants). training/auditor.py fits the Auditor on them.

The sample takes at most ``per_charge`` cases per charge (by each case's first charge, in a seeded
order), so the rare charges are all there and the frequent ones do not drown them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from django.db import close_old_connections, connections

from worker.agents.models.textmodel import LinearTextModel
from worker.agents.types import CaseInput

log = logging.getLogger(__name__)

# Cases per charge for the rows: 40 rather than 20 gave the boosted Auditor +0.9 points of weighted exact articles
# on the same held-out cases (docs/RESULTS.md), for about 5 minutes of export on 2 workers.
PER_CHARGE = 40
SPECIFIC_PART_FROM = 102


def sample_cases(cases: list[dict], fold_of: dict[str, int], *, per_charge: int = PER_CHARGE, seed: int = 13) -> list[dict]:
    """Training cases with a fold, at most ``per_charge`` per first charge, in a seeded order."""
    order = sorted((c for c in cases if c["id"] in fold_of and _charges(c)),
                   key=lambda c: hashlib.sha256(f"{seed}:auditor:{c['id']}".encode()).digest())
    taken: Counter[str] = Counter()
    chosen = []
    for case in order:
        first = _charges(case)[0]
        if taken[first] < per_charge:
            taken[first] += 1
            chosen.append(case)
    return chosen


def _charges(case: dict) -> list[str]:
    if case.get("charges"):
        return list(case["charges"])
    return sorted({c for d in case.get("per_defendant") or [] for c in d.get("charges") or []})


def _rarest(case: dict, counts: dict[str, int]) -> str:
    return min(_charges(case), key=lambda c: (counts.get(c, 0), c))


class _FoldStrategies:
    """One statistical strategy per fold: that fold's classifiers, the run's verifier and intent models."""

    def __init__(self, out: Path):
        from worker.agents.models.verifier import ChecklistVerifier

        self.out = Path(out)
        self.shared = {}
        for kind, loader in (("verifier", ChecklistVerifier), ("intent", LinearTextModel)):
            if (self.out / kind).is_dir():
                self.shared[kind] = loader.load(self.out / kind)
        self._cache: dict[int, object] = {}

    def get(self, fold: int):
        if fold not in self._cache:
            from apps.judging.services import statistical_strategy

            models = dict(self.shared)
            for kind in ("charges", "articles"):
                directory = self.out / "folds" / str(fold) / kind
                if directory.is_dir():
                    models[kind] = LinearTextModel.load(directory)
            self._cache = {fold: statistical_strategy(models)}  # one fold's models in memory at a time
        return self._cache[fold]


def _gold_of(case: dict, defendant: str) -> tuple[set[int], set[str]]:
    articles = {int(a) for a in case.get("articles") or [] if int(a) >= SPECIFIC_PART_FROM}
    for d in case.get("per_defendant") or []:
        if d.get("name") == defendant and d.get("charges"):
            return articles, set(d["charges"])
    return articles, set(_charges(case))


def case_rows(case: dict, strategy, *, group: str) -> list[dict]:
    """The rows of one training case (every defendant, every in-force candidate article)."""
    from apps.judging.services import judgment_compute
    from worker.agents.strategies.statistical import names_match

    merged = tuple(d if isinstance(d, str) else d.get("id", "") for d in case.get("duplicates") or ())
    bundles = judgment_compute(case=CaseInput(facts=case["fact"], defendants=tuple(d for d in case.get("defendants") or () if d),
                                              ref=case["id"], merged=tuple(m for m in merged if m)),
                               strategy=strategy, exclude_self=True)
    rows = []
    for bundle in bundles:
        if bundle.audit is None:
            continue
        gold_articles, gold_charges = _gold_of(case, bundle.defendant)
        for a in bundle.audit.articles:
            if not a.in_force or not a.signals:
                continue
            number = int(str(a.key).split("-")[0])
            if gold_articles:
                label = number in gold_articles
            else:  # a corpus that labels charges only: the article applies when it defines a gold charge
                label = any(names_match(g, c, strategy.aliases) for g in gold_charges for c in a.charges)
            rows.append({"case": case["id"], "defendant": bundle.defendant, "article": a.key, "label": int(label),
                         "group": group, "signals": a.signals})
    return rows


def _rows_in_child(args: tuple[dict, int, str, str]) -> list[dict]:
    """A forked worker's job: its own connection (AGE is loaded per connection)."""
    close_old_connections()
    return _rows(args)


def _rows(args: tuple[dict, int, str, str]) -> list[dict]:
    case, fold, group, out = args
    global _CHILD_STRATEGIES
    if _CHILD_STRATEGIES is None or _CHILD_STRATEGIES.out != Path(out):
        _CHILD_STRATEGIES = _FoldStrategies(Path(out))
    try:
        return case_rows(case, _CHILD_STRATEGIES.get(fold), group=group)
    except Exception:  # one case that cannot be judged is left out of the training data, and said
        log.exception("auditor rows: case %s failed", case["id"])
        return []


_CHILD_STRATEGIES: _FoldStrategies | None = None


def auditor_rows_export(*, out: Path, cases: list[dict], rows_path: Path, per_charge: int = PER_CHARGE, seed: int = 13,
                        workers: int = 1, progress: Callable[[int, int], None] | None = None) -> dict:
    """Write the rows of a sample of the training cases (those with an out-of-fold group); returns counts."""
    fold_file = Path(out) / "folds" / "charges.json"
    fold_of = json.loads(fold_file.read_text(encoding="utf-8"))
    counts = Counter(c for case in cases if case["id"] in fold_of for c in _charges(case))
    sample = sorted(sample_cases(cases, fold_of, per_charge=per_charge, seed=seed), key=lambda c: fold_of[c["id"]])
    jobs = [(c, fold_of[c["id"]], _rarest(c, counts), str(out)) for c in sample]
    written = 0
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    with rows_path.open("w", encoding="utf-8") as fh:
        if workers <= 1 or len(jobs) < 2:
            results = map(_rows, jobs)
        else:
            connections.close_all()
            pool = multiprocessing.get_context("fork").Pool(workers)
            results = pool.imap(_rows_in_child, jobs, chunksize=4)
        for n, rows in enumerate(results, 1):
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                written += 1
            if progress:
                progress(n, len(jobs))
        if workers > 1 and len(jobs) >= 2:
            pool.close()
            pool.join()
    return {"cases": len(jobs), "rows": written, "charges": len({j[2] for j in jobs})}
