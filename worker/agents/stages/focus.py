"""The focus stage: the part of the facts that concerns one defendant (the statistical strategy's; the LLM
strategy asks the model, worker/agents/strategies/llm.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

SENTENCE_RE = re.compile(r"[^。；;！？!?]+[。；;！？!?]?")


def focus_facts(fact: str, defendant: str | None, all_defendants: Sequence[str]) -> str:
    """The sentences of ``fact`` that concern ``defendant``.

    Keeps sentences naming this defendant and sentences naming no defendant
    (shared context); drops sentences that only name others. Falls back to the
    whole fact when nothing is left or no defendant is given.
    """
    if not defendant or len(all_defendants) < 2:
        return fact
    others = [d for d in all_defendants if d and d != defendant and d not in defendant]
    kept = []
    for sentence in SENTENCE_RE.findall(fact):
        names_self = defendant in sentence
        names_other = any(o in sentence for o in others)
        if names_self or not names_other:
            kept.append(sentence)
    focused = "".join(kept).strip()
    return focused or fact
