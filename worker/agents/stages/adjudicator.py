"""The Adjudicator: the strategy's judgment on the verified evidence, numbered before and checked after.

The strategy decides charges, articles and term (worker/agents/strategies/); around it every strategy
gets the same two steps: only the verified evidence is numbered and citable (verification.number_evidence),
and the judgment is checked against it (verification.verify_judgment). A run and a reviewer's what-if
(worker/agents/tools/whatif.py) both adjudicate through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from worker.agents.ports import GraphStore
from worker.agents.stages import StageClock
from worker.agents.stages.verification import number_evidence, verify_judgment
from worker.agents.types import Audit, CaseInput, Judgment, Research

if TYPE_CHECKING:
    from worker.agents.strategies.base import Strategy


def judge(case: CaseInput, focus: str, audited: Audit, found: Research, *, strategy: Strategy, graph: GraphStore,
          clock: StageClock, excluded_interpretations: frozenset[int] = frozenset()) -> Judgment:
    """Number the verified evidence (a reviewer may exclude interpretations), let the strategy adjudicate on it
    (recorded by ``clock`` as the stage "adjudicator") and verify the judgment."""
    evidence = number_evidence(audited, graph, excluded_interpretations=excluded_interpretations)
    judgment = clock.stage("adjudicator", strategy, strategy.adjudicate, focus, audited, found, evidence, graph)
    return verify_judgment(judgment, audited, case)
