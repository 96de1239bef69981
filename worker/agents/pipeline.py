"""The LegalGraphRAG pipeline for one defendant: focus → features → Researcher →
Auditor → Adjudicator → verification.

This module is the orchestration only; each stage is a module of worker/agents/stages/. Strategy-specific
work (statistical or LLM) goes through a `Strategy`; the orchestration, the evidence numbering and the
verification of the judgment are the same for every strategy, so no strategy can emit a judgment whose
evidence was not verified.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from worker.agents import reasons
from worker.agents.names import ABLATIONS
from worker.agents.ports import GraphStore, Retriever
from worker.agents.stages import Progress, StageClock
from worker.agents.stages.adjudicator import judge
from worker.agents.stages.auditor import audit
from worker.agents.stages.researcher import research
from worker.agents.stages.researcher.paths import PATHS, default_paths
from worker.agents.strategies.base import Strategy
from worker.agents.types import Audit, Bundle, CaseInput, Judgment, Status

PIPELINE_VERSION = "lextrace-pipeline/2"  # 2: terms capped at the statutory maximum
__all__ = ["ABLATIONS", "Params", "Strategy", "StageFailure", "adjudicate", "adjudicate_case"]


@dataclass(frozen=True)
class Params:
    k: int = 5  # cases per retrieval path, articles from R_art (paper default)
    keep_cases: int = 3  # cases kept per path
    max_charges: int = 3  # pre-judged charges (R_chg); a strategy may ask for more (its prejudge_k)
    graph_charges: int = 3  # of those, the ones whose Fact-graph neighbourhood R_chg visits
    alpha: float = 0.4  # sparse weight in the LexPath fusion
    # The Researcher's paths that run (stages/researcher/paths.py); by default every registered default path:
    # ("sem", "com", "chg", "art"). An ablation no_<path> leaves one out.
    paths: tuple[str, ...] = field(default_factory=default_paths)
    use_graph: bool = True  # False: flat retrieval over raw facts (without HierarGraph)
    use_researcher: bool = True  # False: only the pre-judged charges' articles
    use_auditor: bool = True
    naive_rag: bool = False  # flat top-k over all documents, no audit
    # The baseline of the same build: the trained classifiers alone (no retrieval, no audit, no evidence).
    # Only for evaluation: its answers carry no evidence chain and are never a product judgment.
    classifier_only: bool = False
    specific_part_from: int = 102  # candidate articles define offences (CAIL labels the specific part)
    # Leave-one-out evaluation on the corpus's own held-out cases: never retrieve the precedent
    # whose id is the case's ``ref`` (it would carry the answer).
    exclude_self: bool = False

    @classmethod
    def for_ablation(cls, name: str, *, paths: tuple[str, ...] | None = None, **overrides) -> Params:
        """The settings of an ablation; ``paths``: the paths of the full pipeline (a strategy's own, else every
        registered default path), which no_<path> leaves one out of."""
        full = tuple(paths) if paths is not None else default_paths()
        if name not in ABLATIONS:
            raise ValueError(f"unknown ablation {name!r}; choose one of {', '.join(ABLATIONS)}")
        settings: dict = {"paths": full}
        if name == "no_graph":
            settings["use_graph"] = False
        elif name == "no_researcher":
            settings["use_researcher"] = False
        elif name.startswith("no_") and name[3:] in PATHS:
            settings["paths"] = tuple(p for p in full if p != name[3:])
        elif name == "no_auditor":
            settings["use_auditor"] = False
        elif name == "naive_rag":
            settings.update(naive_rag=True, use_auditor=False)
        elif name == "classifier_only":
            settings.update(classifier_only=True, use_researcher=False, use_auditor=False)
        return cls(**{**settings, **overrides})


class StageFailure(Exception):
    """A strategy could not finish a stage; carries the explicit status to report."""

    def __init__(self, status: Status, stage: str, detail: str):
        self.message = f"{stage}: {detail}"
        super().__init__(self.message)
        self.status = status
        self.why = reasons.why(reasons.JUDGMENT_STAGE_FAILED, stage=stage, detail=detail)


def adjudicate(case: CaseInput, defendant: str, *, strategy: Strategy, graph: GraphStore, retriever: Retriever,
               params: Params | None = None, progress: Progress | None = None, researcher=None) -> Bundle:
    """Run the pipeline for one defendant and return the complete evidence bundle.

    ``researcher`` replaces the fixed Researcher (same signature as :func:`research`): the agentic
    mode's planner loop (worker.agents.agentic). Its evidence goes to the same Auditor and Adjudicator.

    ``progress(event, detail)`` is called when a stage starts (event "stage") and after each
    audited article (event "article"). It may raise to abort the run (a cancelled run): the
    exception propagates to the caller; no bundle is returned.
    """
    params = params if params is not None else Params.for_ablation("full", paths=strategy.paths)
    bundle = Bundle(case=case, defendant=defendant, strategy=strategy.name, params=asdict(params),
                    versions={"pipeline": PIPELINE_VERSION, **strategy.versions()})
    clock = StageClock(bundle.costs, progress, defendant)
    try:
        focus = clock.stage("focus", strategy, strategy.focus, case, defendant)
        features, query_text = clock.stage("features", strategy, strategy.features, focus)
        if params.classifier_only:
            bundle.judgment = clock.stage("classifier", strategy, strategy.classify, focus)
            return bundle
        prejudged = clock.stage("prejudge", strategy, strategy.prejudge, focus,
                                max(params.max_charges, strategy.prejudge_k))
        bundle.research = clock.stage("researcher", strategy, researcher or research, case, focus, features, query_text, prejudged,
                                      graph=graph, retriever=retriever, params=params,
                                      intents=strategy.intent_classifier, expand=strategy.expand_keywords,
                                      **_research_choices(strategy, researcher))
        if not bundle.research.candidate_articles:
            bundle.judgment = Judgment(status=Status.NO_EVIDENCE, message="retrieval found no candidate article",
                                       why=[reasons.why(reasons.JUDGMENT_NO_CANDIDATE)])
            return bundle
        bundle.audit = clock.stage("auditor", strategy, audit, case, focus, bundle.research, strategy, graph=graph, params=params,
                                   progress=progress)
        if not bundle.audit.verified:
            not_in_force = [a for a in bundle.audit.articles if not a.in_force]
            status = Status.NOT_IN_FORCE if not_in_force and len(not_in_force) == len(bundle.audit.articles) else Status.INSUFFICIENT_EVIDENCE
            message, why = _nothing_verified(bundle.audit)
            bundle.judgment = Judgment(status=status, message=message, why=[why])
            return bundle
        bundle.judgment = judge(case, focus, bundle.audit, bundle.research, strategy=strategy, graph=graph, clock=clock)
    except StageFailure as failure:
        bundle.judgment = Judgment(status=failure.status, message=failure.message, why=[failure.why])
    finally:
        # Prompts and raw replies, so the run can be replayed and audited.
        bundle.llm_records = list(strategy.records)
    return bundle


def _research_choices(strategy: Strategy, researcher) -> dict:
    """The LLM strategy's community pick and case selection, and the statute charges of a pre-judged label,
    for the fixed Researcher only."""
    if researcher is not None:
        return {}
    return {"pick_community": strategy.pick_community, "select_cases": strategy.select_cases,
            "resolve": strategy.statute_charges_of}


def _nothing_verified(result: Audit) -> tuple[str, dict]:
    """Why no judgment: the Auditor verified nothing; the most probable candidate and what it lacked."""
    best = max((a for a in result.articles if a.in_force), key=lambda a: (a.score, -a.article_pk), default=None)
    if best is None:
        return "the Auditor verified no candidate article", reasons.why(reasons.JUDGMENT_NOTHING_VERIFIED)
    shown = sum(1 for i in best.items if i.satisfied)
    lacked = (f"none of its {len(best.items)} checklist items is shown by the facts" if not shown
              else f"{shown} of its {len(best.items)} checklist items shown, but P = {best.score:.2f} is below the Auditor's threshold")
    return (f"the Auditor verified no candidate article; the most probable, {best.label}, was not verified: {lacked}",
            reasons.why(reasons.JUDGMENT_NOTHING_VERIFIED, label=best.label, shown=shown, total=len(best.items),
                        p=round(best.score, 4)))


def adjudicate_case(case: CaseInput, **kwargs) -> list[Bundle]:
    """One bundle per defendant (one for the whole case when no defendant is named)."""
    return [adjudicate(case, d, **kwargs) for d in (case.defendants or ("",))]
