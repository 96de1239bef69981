"""Typed inputs and outputs of every stage of the reasoning pipeline.

Everything is a plain dataclass that serialises to JSON (``to_dict``) so a run
can be stored as an evidence bundle, replayed and diffed stage by stage.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum

from worker.agents.graph_types import Term


class Status(StrEnum):
    """How a run for one defendant ended. Only JUDGED carries a judgment; the
    others are explicit failure states, never a silent "not guilty"."""

    JUDGED = "judged"
    NO_EVIDENCE = "no_evidence"  # retrieval found no candidate article at all
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"  # the Auditor verified no article
    MODEL_UNAVAILABLE = "model_unavailable"
    UNPARSEABLE_OUTPUT = "unparseable_output"
    UNRESOLVED_CITATION = "unresolved_citation"
    NOT_IN_FORCE = "article_not_in_force"
    BUDGET_EXHAUSTED = "budget_exhausted"


@dataclass(frozen=True)
class CaseInput:
    facts: str
    defendants: tuple[str, ...] = ()
    offence_date: dt.date | None = None
    ref: str = ""  # the precedent id of a corpus case judged in a leave-one-out evaluation
    merged: tuple[str, ...] = ()  # ids of the records merged into that precedent (also never retrieved)

    def left_out(self, ext_id: str) -> bool:
        """Leave-one-out: ``ext_id`` is this very case (or a record merged into it)."""
        return bool(self.ref) and (ext_id == self.ref or ext_id in self.merged)


@dataclass(frozen=True)
class Hit:
    """One retrieved item: which path found it, what it is, how strongly."""

    path: str  # sem | com | chg | art | flat
    kind: str  # case | article | community | charge
    pk: int | str
    score: float
    label: str = ""


@dataclass
class Research:
    focus: str
    features: dict[str, list[str]]
    query_text: str
    hits: list[Hit] = field(default_factory=list)
    prejudged: list[tuple[str, float]] = field(default_factory=list)
    community: int | None = None
    candidate_articles: list[int] = field(default_factory=list)
    candidate_cases: list[int] = field(default_factory=list)
    # article pk -> why it is a candidate (paths)
    article_sources: dict[int, list[str]] = field(default_factory=dict)
    # pre-judged charge -> article pk -> share of the precedents convicted of it that cite the article (Fact graph)
    fact_shares: dict[str, dict[int, float]] = field(default_factory=dict)
    # The agentic mode (worker.agents.agentic): the planner's steps, and the precedents ranked for
    # sentencing (authority × similarity, with their Punishment Severity Index). Empty in the fixed mode.
    steps: list[PlanStep] = field(default_factory=list)
    sentencing: dict = field(default_factory=dict)


@dataclass
class PlanStep:
    """One step of the agentic planner: what it knew, what it chose, what the retrieval returned."""

    n: int
    state: dict  # summary of the evidence before the step (candidate charges, what is missing)
    action: str  # search_statutes | search_interpretations | search_precedents | stop | the refused reply
    query: str = ""
    reason: str = ""
    status: str = "ok"  # ok | stop | repeated | rejected | cap_steps | cap_calls | budget
    refused: str = ""  # why the step was not run (repeated, unknown action, …)
    results: list[dict] = field(default_factory=list)  # {kind, pk, label, score, detail}
    new: int = 0  # items not seen in earlier steps
    planner_calls: int = 0  # LLM calls the planner made for this step


@dataclass
class ItemVerdict:
    item_pk: int
    order: int
    question: str
    satisfied: bool
    score: float
    reasoning: str
    span: tuple[int, int] | None = None
    span_text: str = ""
    why: dict = field(default_factory=dict)  # {"code": worker.agents.reasons.*, ...values}


@dataclass
class ArticleAudit:
    article_pk: int
    key: str
    label: str
    charges: list[str]
    version_pk: int | None
    text: str
    in_force: bool
    items: list[ItemVerdict] = field(default_factory=list)
    interpretations: list[int] = field(default_factory=list)
    interpretation_texts: list[str] = field(default_factory=list)
    prior: float = 0.0
    score: float = 0.0
    passed: bool = False
    reason: str = ""
    why: dict = field(default_factory=dict)  # {"code": worker.agents.reasons.*, ...values}
    # The statistical Auditor's evidence for this article (worker.agents.signals) and what each kind of it
    # contributed to the decision's log-odds; empty for the LLM strategy.
    signals: dict[str, float] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)


@dataclass
class Pruned:
    kind: str  # article | case | charge
    pk: int | str
    reason: str
    why: dict = field(default_factory=dict)  # {"code": worker.agents.reasons.*, ...values}


@dataclass
class Audit:
    articles: list[ArticleAudit] = field(default_factory=list)
    pruned: list[Pruned] = field(default_factory=list)
    verified_cases: list[int] = field(default_factory=list)

    @property
    def verified(self) -> list[ArticleAudit]:
        return [a for a in self.articles if a.passed]


@dataclass(frozen=True)
class Evidence:
    """A numbered item the judgment may cite as [n]. Only verified material is numbered."""

    n: int
    kind: str  # article | interpretation | checklist | precedent
    ref: str
    pk: int
    text: str


@dataclass
class Judgment:
    status: Status
    charges: list[str] = field(default_factory=list)
    article_keys: list[str] = field(default_factory=list)
    article_pks: list[int] = field(default_factory=list)
    term: Term | None = None
    reasoning: str = ""
    citations: list[int] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    message: str = ""
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == Status.JUDGED


@dataclass
class StageCost:
    stage: str
    seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Bundle:
    """The complete record of one defendant's run."""

    case: CaseInput
    defendant: str
    strategy: str
    params: dict
    versions: dict[str, str]
    research: Research | None = None
    audit: Audit | None = None
    judgment: Judgment | None = None
    costs: list[StageCost] = field(default_factory=list)
    llm_records: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return _jsonable(dataclasses.asdict(self))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, StrEnum):
        return value.value
    return value
