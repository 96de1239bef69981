"""The bundles of approved agentic runs: what training/trajectories.py turns into planner SFT data.

An approved run is one whose review (apps.review) is approved with a valid approval decision; only
runs in the agentic mode carry planner steps.
"""

from __future__ import annotations

from collections.abc import Iterator

from apps.cases.models import JudgmentRun


def approved_agentic_bundles() -> Iterator[dict]:
    """Bundle.to_dict() of every defendant of every approved agentic run, oldest run first."""
    from apps.review.selectors import approved_results_query

    results = approved_results_query().filter(run__mode=JudgmentRun.Mode.AGENTIC)
    for result in results.iterator():
        yield result.bundle


def trajectories_export(*, out, lang: str = "zh", raw_bundles: bool = False) -> dict:
    """Write the planner trajectories of the approved agentic runs to ``out`` as chat JSONL with the
    evidence masked (worker/agents/tools/trajectories.py), or with ``raw_bundles`` the bundles themselves
    (for training/trajectories.py, which also drops cases that overlap an evaluation set)."""
    import json

    from worker.agents.tools.trajectories import trajectory_example

    bundles = written = 0
    with open(out, "w", encoding="utf-8") as handle:
        for bundle in approved_agentic_bundles():
            bundles += 1
            example = bundle if raw_bundles else trajectory_example(bundle, lang=lang)
            if example is not None:
                handle.write(json.dumps(example, ensure_ascii=False) + "\n")
                written += 1
    return {"bundles": bundles, "written": written, "format": "bundles" if raw_bundles else "chat"}
