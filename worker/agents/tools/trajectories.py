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

import dataclasses

from worker.agents.prompts.planner import (
    ACTIONS,
    PLANNER_PROMPT_VERSION,
    action_message,
    observation_message,
    planner_messages,
)
from worker.agents.types import Bundle, PlanStep

KEPT_STATUSES = ("ok", "stop")


def trajectory_example(bundle: Bundle | dict, *, lang: str = "zh") -> dict | None:
    """The SFT conversation of one agentic bundle (typed, or as Bundle.to_dict() stored it), or None
    when it holds no planner step."""
    bundle = Bundle.of(bundle)
    research = bundle.research
    steps = [s for s in (research.steps if research else []) if s.status in KEPT_STATUSES and s.action in ACTIONS]
    if not steps:
        return None
    facts = research.focus or bundle.case.facts
    prejudged = [tuple(p) for p in research.prejudged]
    messages = planner_messages(lang, facts=facts, defendant=bundle.defendant, prejudged=prejudged)
    weights = [0] * len(messages)
    synthetic = steps[-1].action != "stop"
    if synthetic:
        steps.append(PlanStep(n=len(steps) + 1, state={}, action="stop", status="stop"))
    for n, step in enumerate(steps, start=1):
        messages.append(action_message(dataclasses.asdict(step)))
        weights.append(1)
        if step.action != "stop":
            messages.append(observation_message(lang, n, step.results or []))
            weights.append(0)
    judgment = bundle.judgment
    return {
        "messages": [{**m, "weight": w} for m, w in zip(messages, weights)],
        "stage": "plan", "prompt_version": PLANNER_PROMPT_VERSION, "synthetic_stop": synthetic,
        "case_ref": bundle.case.ref, "defendant": bundle.defendant,
        # For GRPO: the reference trajectory and the outcome the run reached (as the bundle stores it).
        "reference": [{"action": s.action, "query": s.query, "results": list(s.results or [])} for s in steps],
        "judgment": {"charges": list(judgment.charges), "article_keys": list(judgment.article_keys),
                     "term": dataclasses.asdict(judgment.term) if judgment.term is not None else None}
        if judgment else dict.fromkeys(("charges", "article_keys", "term")),
        "facts": facts, "prejudged": prejudged,
    }
