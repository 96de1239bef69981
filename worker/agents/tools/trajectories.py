"""Planner trajectories as chat conversations for supervised fine-tuning (pure).

One agentic bundle (Bundle.to_dict()) becomes one multi-turn conversation in the planner's own
format (worker/agents/prompts/planner.py), so training and inference see the same text:

    system · user (case, instructions, pre-judged charges) · assistant (action 1) · user (OBSERVATION 1)
    · … · assistant (stop)

Evidence is masked: every message carries ``"weight"`` — 1 on the planner's actions (the training
target), 0 on the system prompt, the case and every observation (the retrieved evidence is context,
never a target) — the per-message loss weight of OpenAI-style chat fine-tuning; training/grpo.py and
TRL's assistant-only loss read it the same way. Refused steps (repeated search, unknown action, empty
query) are left out: a reviewer approved the evidence, not the planner's mistakes. A trajectory that
a cap ended gets a final stop (``synthetic_stop``): what the planner should have said.

Used by `manage.py export_trajectories` (approved runs from the database) and training/trajectories.py
(bundle files, with the contamination filter).
"""

from __future__ import annotations

from worker.agents.prompts.planner import (
    ACTIONS,
    PLANNER_PROMPT_VERSION,
    action_message,
    observation_message,
    planner_messages,
)

KEPT_STATUSES = ("ok", "stop")


def _steps(bundle: dict) -> list[dict]:
    return list(((bundle.get("research") or {}).get("steps")) or [])


def trajectory_example(bundle: dict, *, lang: str = "zh") -> dict | None:
    """The SFT conversation of one agentic bundle, or None when it holds no planner step."""
    steps = [s for s in _steps(bundle) if s.get("status") in KEPT_STATUSES and s.get("action") in ACTIONS]
    if not steps:
        return None
    research = bundle.get("research") or {}
    facts = research.get("focus") or (bundle.get("case") or {}).get("facts", "")
    prejudged = [tuple(p) for p in research.get("prejudged") or []]
    messages = planner_messages(lang, facts=facts, defendant=bundle.get("defendant", ""), prejudged=prejudged)
    weights = [0] * len(messages)
    synthetic = steps[-1].get("action") != "stop"
    if synthetic:
        steps.append({"n": len(steps) + 1, "action": "stop", "query": "", "reason": "", "status": "stop", "results": []})
    for n, step in enumerate(steps, start=1):
        messages.append(action_message(step))
        weights.append(1)
        if step["action"] != "stop":
            messages.append(observation_message(lang, n, step.get("results") or []))
            weights.append(0)
    return {
        "messages": [{**m, "weight": w} for m, w in zip(messages, weights)],
        "stage": "plan", "prompt_version": PLANNER_PROMPT_VERSION, "synthetic_stop": synthetic,
        "case_ref": (bundle.get("case") or {}).get("ref", ""), "defendant": bundle.get("defendant", ""),
        # For GRPO: the reference trajectory and the outcome the run reached.
        "reference": [{"action": s["action"], "query": s.get("query", ""), "results": s.get("results") or []} for s in steps],
        "judgment": {k: (bundle.get("judgment") or {}).get(k) for k in ("charges", "article_keys", "term")},
        "facts": facts, "prejudged": prejudged,
    }
