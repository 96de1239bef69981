"""Typed inputs and outputs of every stage of the reasoning pipeline.

Everything is a plain dataclass that serialises to JSON (``to_dict``) so a run
can be stored as an evidence bundle, replayed and diffed stage by stage; ``Bundle.from_dict`` reads
a stored bundle back (every schema version so far), so nothing outside this module indexes the dict.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum

from worker.agents.graph_types import Term


# 1: the bundles stored before the version was written (no "schema" key); 2: the same layout with it.
BUNDLE_SCHEMA = 2


class BundleSchemaError(ValueError):
    """A stored bundle of a schema this code does not know (written by a newer version)."""


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
    # The statistical Auditor's evidence for this article (stages/auditor/signals.py) and what each kind of it
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
    message: str = ""  # English, for developers, logs and the API; the pages read ``why``
    scores: dict[str, float] = field(default_factory=dict)
    # Why there is no judgment, or what changed in it: [{"code": worker.agents.reasons.JUDGMENT_*, ...values}]
    why: list[dict] = field(default_factory=list)
    # What the term stands on (worker.agents.models.sentencing.term_basis); empty when the strategy gives none.
    term_basis: dict = field(default_factory=dict)
    # Why each verified article the judgment does not cite is left out: [{"code": reasons.JUDGMENT_NOT_CITED, ...}]
    not_cited: list[dict] = field(default_factory=list)

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
    schema: int = BUNDLE_SCHEMA

    def to_dict(self) -> dict:
        return _jsonable(self)

    @classmethod
    def of(cls, bundle: Bundle | dict) -> Bundle:
        """The typed bundle: a stored one (``to_dict``'s dict) is read with ``from_dict``, a Bundle passes as it is."""
        return bundle if isinstance(bundle, Bundle) else cls.from_dict(bundle)

    @classmethod
    def from_dict(cls, data: dict) -> Bundle:
        """The bundle ``to_dict`` wrote (any schema up to BUNDLE_SCHEMA; a missing key takes its default)."""
        schema = int(data.get("schema") or 1)
        if schema > BUNDLE_SCHEMA:
            raise BundleSchemaError(f"bundle schema {schema} is newer than this code's {BUNDLE_SCHEMA}")
        return cls(case=case_from(data.get("case") or {}), defendant=data.get("defendant", ""),
                   strategy=data.get("strategy", ""), params=dict(data.get("params") or {}),
                   versions=dict(data.get("versions") or {}),
                   research=research_from(data["research"]) if data.get("research") else None,
                   audit=audit_from(data["audit"]) if data.get("audit") else None,
                   judgment=judgment_from(data["judgment"]) if data.get("judgment") else None,
                   costs=[StageCost(**c) for c in data.get("costs") or []],
                   llm_records=list(data.get("llm_records") or []), schema=BUNDLE_SCHEMA)


# --- readers of the stored form (the inverse of to_dict, one per type) ----------------------------


def case_from(data: dict) -> CaseInput:
    day = data.get("offence_date")
    return CaseInput(facts=data.get("facts", ""), defendants=_names(data.get("defendants")),
                     offence_date=dt.date.fromisoformat(day) if day else None, ref=data.get("ref", ""),
                     merged=tuple(data.get("merged") or ()))


def _names(value) -> tuple[str, ...]:
    """The defendants as stored: a list, or in some bundles of schema 1 the list's Python repr
    ("['张某', '李某']"); a bare name counts as one defendant."""
    if not value:
        return ()
    if isinstance(value, str):
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return (value,)
        return tuple(str(name) for name in parsed) if isinstance(parsed, (list, tuple)) else (value,)
    return tuple(value)


def _step_from(data: dict) -> PlanStep:
    known = {f.name for f in dataclasses.fields(PlanStep)}
    return PlanStep(**{k: v for k, v in data.items() if k in known})


def research_from(data: dict) -> Research:
    return Research(
        focus=data.get("focus", ""), features={k: list(v) for k, v in (data.get("features") or {}).items()},
        query_text=data.get("query_text", ""),
        hits=[Hit(path=h["path"], kind=h["kind"], pk=h["pk"], score=h["score"], label=h.get("label", ""))
              for h in data.get("hits") or []],
        prejudged=[(c, p) for c, p in data.get("prejudged") or []],
        community=data.get("community"),
        candidate_articles=[int(pk) for pk in data.get("candidate_articles") or []],
        candidate_cases=[int(pk) for pk in data.get("candidate_cases") or []],
        article_sources={int(k): list(v) for k, v in (data.get("article_sources") or {}).items()},
        fact_shares={c: {int(k): v for k, v in shares.items()} for c, shares in (data.get("fact_shares") or {}).items()},
        steps=[_step_from(st) for st in data.get("steps") or []],
        sentencing=dict(data.get("sentencing") or {}),
    )


def item_from(data: dict) -> ItemVerdict:
    span = data.get("span")
    return ItemVerdict(item_pk=int(data["item_pk"]), order=data.get("order", 0), question=data.get("question", ""),
                       satisfied=bool(data.get("satisfied")), score=data.get("score", 0.0),
                       reasoning=data.get("reasoning", ""), span=tuple(span) if span else None,
                       span_text=data.get("span_text", ""), why=dict(data.get("why") or {}))


def article_from(a: dict) -> ArticleAudit:
    return ArticleAudit(
        article_pk=int(a["article_pk"]), key=str(a["key"]), label=a.get("label", ""), charges=list(a.get("charges") or []),
        version_pk=a.get("version_pk"), text=a.get("text", ""), in_force=bool(a.get("in_force")),
        items=[item_from(i) for i in a.get("items") or []],
        interpretations=[int(pk) for pk in a.get("interpretations") or []],
        interpretation_texts=list(a.get("interpretation_texts") or []),
        prior=a.get("prior", 0.0), score=a.get("score", 0.0), passed=bool(a.get("passed")), reason=a.get("reason", ""),
        why=dict(a.get("why") or {}), signals=dict(a.get("signals") or {}),
        contributions=dict(a.get("contributions") or {}))


def audit_from(data: dict) -> Audit:
    return Audit(articles=[article_from(a) for a in data.get("articles") or []],
                 pruned=[Pruned(p["kind"], p["pk"], p.get("reason", ""), dict(p.get("why") or {}))
                         for p in data.get("pruned") or []],
                 verified_cases=[int(pk) for pk in data.get("verified_cases") or []])


def judgment_from(data: dict) -> Judgment:
    term = data.get("term")
    return Judgment(status=Status(data["status"]), charges=list(data.get("charges") or []),
                    article_keys=[str(k) for k in data.get("article_keys") or []],
                    article_pks=[int(pk) for pk in data.get("article_pks") or []],
                    term=Term(**term) if term else None, reasoning=data.get("reasoning", ""),
                    citations=[int(n) for n in data.get("citations") or []],
                    evidence=[Evidence(**e) for e in data.get("evidence") or []],
                    message=data.get("message", ""), scores=dict(data.get("scores") or {}),
                    why=[dict(w) for w in data.get("why") or []], term_basis=dict(data.get("term_basis") or {}),
                    not_cited=[dict(w) for w in data.get("not_cited") or []])


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _jsonable(value):
    """What ``json`` writes for a bundle: dataclasses as dicts of their fields, tuples as lists, dict keys as
    strings, dates in ISO form, enums by value. One pass, copying nothing twice (``dataclasses.asdict`` first
    deep-copied every value, a what-if's largest cost after the database)."""
    names = _FIELD_NAMES.get(type(value))
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELD_NAMES.setdefault(type(value), tuple(f.name for f in dataclasses.fields(value)))
    if names is not None:
        return {name: _jsonable(getattr(value, name)) for name in names}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, StrEnum):
        return value.value
    return value
