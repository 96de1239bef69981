"""The LegalGraphRAG pipeline for one defendant: focus → features → Researcher →
Auditor → Adjudicator → verification.

Strategy-specific work (statistical or LLM) goes through a `Strategy`; the
orchestration, the evidence numbering and the verification of the judgment are
the same for every strategy, so no strategy can emit a judgment whose evidence
was not verified.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace

from worker.agents import reasons
from worker.agents.graph_types import ArticleNode, CaseNode, CommunityNode, Term
from worker.agents.models import sentencing
from worker.agents.names import ABLATIONS
from worker.agents.ports import GraphStore, Retriever
from worker.agents.stages.researcher import retrieval
from worker.agents.strategies.base import Strategy
from worker.agents.types import (
    ArticleAudit,
    Audit,
    Bundle,
    CaseInput,
    Evidence,
    Hit,
    Judgment,
    Pruned,
    Research,
    StageCost,
    Status,
)

Progress = Callable[[str, dict], None]

PIPELINE_VERSION = "lextrace-pipeline/2"  # 2: terms capped at the statutory maximum
__all__ = ["ABLATIONS", "Params", "Strategy", "StageFailure", "adjudicate", "adjudicate_case"]


@dataclass(frozen=True)
class Params:
    k: int = 5  # cases per retrieval path, articles from R_art (paper default)
    keep_cases: int = 3  # cases kept per path
    max_charges: int = 3  # pre-judged charges (R_chg); a strategy may ask for more (its prejudge_k)
    graph_charges: int = 3  # of those, the ones whose Fact-graph neighbourhood R_chg visits
    alpha: float = 0.4  # sparse weight in the LexPath fusion
    paths: tuple[str, ...] = ("sem", "com", "chg", "art")
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
    def for_ablation(cls, name: str, **overrides) -> Params:
        if name not in ABLATIONS:
            raise ValueError(f"unknown ablation {name!r}; choose one of {', '.join(ABLATIONS)}")
        settings: dict = {}
        if name == "no_graph":
            settings = {"use_graph": False}
        elif name == "no_researcher":
            settings = {"use_researcher": False}
        elif name.startswith("no_") and name[3:] in ("sem", "com", "chg", "art"):
            settings = {"paths": tuple(p for p in cls.paths if p != name[3:])}
        elif name == "no_auditor":
            settings = {"use_auditor": False}
        elif name == "naive_rag":
            settings = {"naive_rag": True, "use_auditor": False}
        elif name == "classifier_only":
            settings = {"classifier_only": True, "use_researcher": False, "use_auditor": False}
        return cls(**{**settings, **overrides})


class StageFailure(Exception):
    """A strategy could not finish a stage; carries the explicit status to report."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


# --- Researcher ---------------------------------------------------------------

def _cite_shares(cases, floor: float = 0.05) -> dict[int, float]:
    """Article pk → share of ``cases`` citing it (shares below ``floor`` left out)."""
    counts: dict[int, int] = {}
    for case in cases:
        for pk in set(case.article_pks):
            counts[pk] = counts.get(pk, 0) + 1
    return {pk: round(n / len(cases), 4) for pk, n in sorted(counts.items()) if n / len(cases) >= floor} if cases else {}


def _most_cited(cases, n: int) -> list[int]:
    counts: dict[int, int] = {}
    for case in cases:
        for pk in case.article_pks:
            counts[pk] = counts.get(pk, 0) + 1
    return [pk for pk, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def _is_candidate(article: ArticleNode | None, params: Params, *, companion: bool = False) -> bool:
    """A specific-part article that defines a charge; with ``companion`` also one that defines none (a
    punishment article such as 383 for 382), reached through the precedents that cite it."""
    return article is not None and article.number >= params.specific_part_from and (bool(article.charges) or companion)


def research(case: CaseInput, focus: str, features: dict, query_text: str, prejudged: list[tuple[str, float]], *,
             graph: GraphStore, retriever: Retriever, params: Params,
             intents: retrieval.IntentClassifier | None = None,
             expand: Callable[[str], list[str]] | None = None,
             pick_community: Callable[[str, list[CommunityNode]], int | None] | None = None,
             select_cases: Callable[[str, list[CaseNode]], list[int] | None] | None = None) -> Research:
    """The Researcher's paths. ``intents``: the trained intent classifier for the article rerank (else the
    cue rules); ``expand``: IRAC keyword expansion of the sparse article query (LLM strategy only).

    The LLM strategy may also judge two retrieval steps (None = the statistical scores decide):
    ``pick_community`` chooses the community among the ``COMMUNITY_SHORTLIST`` best scored, and
    ``select_cases`` keeps the most similar of the semantic path's ``2k`` candidates (at most 3; none is a
    valid answer). Either returns None when the model could not answer; the scores decide then."""
    result = Research(focus=focus, features=features, query_text=query_text, prejudged=prejudged)
    cases: dict[int, list[str]] = {}
    articles: dict[int, list[str]] = {}

    def is_self(pk: int) -> bool:
        if not (params.exclude_self and case.ref):
            return False
        node = graph.case(pk)
        return node is not None and case.left_out(node.ext_id)

    def add_cases(path: str, scored: Iterable[tuple[int, float]]):
        scored = list(scored)
        if params.exclude_self and case.ref:
            graph.cases(pk for pk, _ in scored)  # one batch read for the leave-one-out check
        for pk, score in [(pk, score) for pk, score in scored if not is_self(pk)][: params.keep_cases]:
            result.hits.append(Hit(path=path, kind="case", pk=pk, score=round(float(score), 6)))
            cases.setdefault(pk, []).append(path)

    nodes: dict[int, ArticleNode | None] = {}

    def add_articles(path: str, pks: Iterable[int], companion: bool = False):
        pks = list(pks)
        graph.prefetch_articles(pk for pk in pks if pk not in nodes)
        for pk in pks:
            if pk not in nodes:
                nodes[pk] = graph.article(pk)
            if _is_candidate(nodes[pk], params, companion=companion):
                articles.setdefault(pk, []).append(path)

    if params.naive_rag:
        add_cases("flat", retriever.flat_cases(focus, params.k))
        fused = retrieval.fuse(dict(retriever.articles_sparse(focus, params.k)), dict(retriever.articles_dense(focus, params.k)),
                               alpha=params.alpha)
        for pk, score in retrieval.top(fused.items(), params.k):
            result.hits.append(Hit(path="flat", kind="article", pk=pk, score=round(score, 6)))
            add_articles("flat", [pk])
    elif params.use_researcher:
        if "sem" in params.paths:
            if params.use_graph and select_cases is not None:
                add_cases("sem", _llm_selected_cases(query_text, focus, retriever, graph, params, select_cases, is_self))
            else:
                add_cases("sem", retriever.similar_cases(query_text, params.k) if params.use_graph
                          else retriever.flat_cases(focus, params.k))
        if "com" in params.paths and params.use_graph:
            best = _community_choice(query_text, focus, retriever, graph, pick_community)
            if best:
                result.community = best[0][0]
                result.hits.append(Hit(path="com", kind="community", pk=best[0][0], score=round(best[0][1], 6),
                                       label="chosen by the model" if pick_community else ""))
                members = graph.community_members(best[0][0])
                add_cases("com", retriever.case_scores(query_text, members)[: params.k])
        if "chg" in params.paths:
            for n, (charge, p) in enumerate(prejudged):
                result.hits.append(Hit(path="chg", kind="charge", pk=charge, score=round(p, 6)))
                add_articles("chg", [a.pk for a in graph.articles_defining(charge)])
                if params.use_graph and n < params.graph_charges:
                    # The charge's Fact-graph neighbourhood: its cases and the articles they cite
                    # (this also reaches articles for dataset charge names no article defines, and the
                    # punishment articles that go with a charge).
                    offence_cases = [c for c in graph.cases_of_offence(charge, limit=200) if not is_self(c.pk)]
                    result.fact_shares[charge] = _cite_shares(offence_cases)
                    add_articles("chg", _most_cited(offence_cases, 2), companion=True)
                    add_cases("chg", retriever.case_scores(query_text, [c.pk for c in offence_cases])[: params.k])
        if "art" in params.paths:
            keywords = expand(focus) if expand else []
            for keyword in keywords:
                result.hits.append(Hit(path="art", kind="keyword", pk=keyword, score=0.0, label=keyword))
            sparse = dict(retriever.articles_sparse(" ".join([focus, *keywords]), 2 * params.k))
            dense = dict(retriever.articles_dense(focus, 2 * params.k))
            fused = retrieval.fuse(sparse, dense, alpha=params.alpha)
            graph.prefetch_articles(fused)
            texts = {pk: " ".join(t.text for t in graph.article_texts(pk)[-1:]) for pk in fused}
            for pk, score in retrieval.rerank_by_intent(focus, fused, texts, classifier=intents)[: params.k]:
                result.hits.append(Hit(path="art", kind="article", pk=pk, score=round(score, 6)))
                add_articles("art", [pk])
    else:  # without the Researcher: the pre-judged charges' articles only
        for charge, p in prejudged:
            result.hits.append(Hit(path="chg", kind="charge", pk=charge, score=round(p, 6)))
            add_articles("chg", [a.pk for a in graph.articles_defining(charge)])

    graph.prefetch_articles_of_cases(cases)
    for pk, paths in cases.items():
        add_articles("case", [a.pk for a in graph.articles_of_case(pk)], companion=True)
    result.candidate_cases = sorted(cases)
    result.candidate_articles = sorted(articles, key=lambda pk: (nodes[pk].number, nodes[pk].sub))
    result.article_sources = {pk: sorted(set(v)) for pk, v in articles.items()}
    return result


COMMUNITY_SHORTLIST = 5


def _community_choice(query_text: str, focus: str, retriever: Retriever, graph: GraphStore,
                      pick: Callable[[str, list[CommunityNode]], int | None] | None) -> list[tuple[int, float]]:
    """[(community, score)]: the best scored one, or the model's choice among the shortlist."""
    ranked = retriever.community_scores(query_text)
    if pick is None or len(ranked) < 2:
        return ranked[:1]
    shortlist = dict(ranked[:COMMUNITY_SHORTLIST])
    nodes = [c for c in graph.communities() if c.pk in shortlist]
    chosen = pick(focus, sorted(nodes, key=lambda c: -shortlist[c.pk]))
    if chosen not in shortlist:
        return ranked[:1]
    return [(chosen, shortlist[chosen])]


def _llm_selected_cases(query_text: str, focus: str, retriever: Retriever, graph: GraphStore, params: Params,
                        select: Callable[[str, list[CaseNode]], list[int] | None], is_self) -> list[tuple[int, float]]:
    candidates = [(pk, score) for pk, score in retriever.similar_cases(query_text, 2 * params.k) if not is_self(pk)]
    found = {n.pk: n for n in graph.cases(pk for pk, _score in candidates)}
    nodes = [found[pk] for pk, _score in candidates if pk in found]
    selected = select(focus, nodes) if nodes else []
    if selected is None:  # no answer from the model: the similarity ranking decides
        return candidates[: params.k]
    scores = dict(candidates)
    return [(pk, scores[pk]) for pk in dict.fromkeys(selected) if pk in scores]


# --- Auditor ------------------------------------------------------------------

def precedent_support(found: Research, graph: GraphStore) -> dict[str, float]:
    """Charge → score-weighted share of the retrieved cases convicted of it (the precedents' vote)."""
    weights: dict[int, float] = {}
    for hit in found.hits:
        if hit.kind == "case":
            weights[hit.pk] = max(weights.get(hit.pk, 0.0), max(float(hit.score), 0.0))
    total = sum(weights.values())
    if total <= 0:
        return {}
    votes: dict[str, float] = {}
    nodes = {n.pk: n for n in graph.cases(weights)}
    for pk, weight in weights.items():
        node = nodes.get(pk)
        for charge in node.charges if node else ():
            votes[charge] = votes.get(charge, 0.0) + weight / total
    return {c: round(v, 6) for c, v in votes.items()}


def audit(case: CaseInput, focus: str, found: Research, strategy: Strategy, *, graph: GraphStore, params: Params,
          progress: Progress | None = None) -> Audit:
    """Check every checklist item of every candidate article, then decide the articles.

    The decision comes after every candidate's items are known: the statistical Auditor weighs an article
    against the other candidates (worker.agents.stages.auditor.signals). ``progress`` hears of each decided article."""
    result = Audit()
    to_check = []
    for pk in found.candidate_articles:
        node = graph.article(pk)
        texts = graph.article_texts(pk)
        version = next((t for t in reversed(texts) if t.in_force_on(case.offence_date)), None)
        entry = ArticleAudit(article_pk=pk, key=_key(node), label=node.label, charges=list(node.charges),
                             version_pk=version.version_pk if version else None, text=version.text if version else "",
                             in_force=version is not None)
        result.articles.append(entry)
        if version is None:
            entry.reason = f"no version of {node.label} was in force on {case.offence_date}"
            entry.why = reasons.why(reasons.ARTICLE_NOT_IN_FORCE, label=node.label,
                                    date=case.offence_date.isoformat() if case.offence_date else None)
            continue
        items = graph.checklist(pk, version.version_pk) or graph.checklist(pk)
        interpretations = graph.interpretations(pk)
        entry.interpretations = [i.pk for i in interpretations]
        entry.interpretation_texts = [f"{i.source}{i.para}　{i.text}" for i in interpretations[:3]]
        to_check.append((entry, items))
    if params.use_auditor:
        strategy.verify_checklists(focus, to_check)

    decided = 0

    def on_decided(entry: ArticleAudit) -> None:
        nonlocal decided
        decided += 1
        if progress:
            progress("article", {"article": entry.label, "key": entry.key, "passed": entry.passed,
                                 "done": decided, "total": len(result.articles)})

    in_force = [a for a in result.articles if a.in_force]
    if params.use_auditor:
        strategy.decide_articles(focus, in_force, found, graph, on_decided)
        for entry in in_force:
            entry.why = entry.why or reasons.why(reasons.ARTICLE_MODEL, applies=entry.passed)
    else:  # no checklist is decided at all: the ablation and the naive baseline cost no audit call
        for entry in in_force:
            entry.passed, entry.score, entry.reason = True, 1.0, "auditor disabled (ablation): accepted unchecked"
            entry.why = reasons.why(reasons.ARTICLE_UNCHECKED)
            on_decided(entry)
    for entry in result.articles:
        if not entry.in_force:
            on_decided(entry)
    return prune(result, found, graph)


def prune(result: Audit, found: Research, graph: GraphStore) -> Audit:
    """Prune what fails the audit: failed articles, then the candidate precedents and the
    pre-judged charges that no verified article supports. Resets earlier pruning (a reviewer's
    what-if re-prunes after changing verdicts)."""
    result.pruned, result.verified_cases = [], []
    failed = {a.article_pk for a in result.articles if not a.passed}
    for a in result.articles:
        if not a.passed:
            result.pruned.append(Pruned("article", a.article_pk, a.reason, reasons.why(reasons.PRUNED_ARTICLE)))
    verified_charges = {c for a in result.verified for c in a.charges}
    nodes = {n.pk: n for n in graph.cases(found.candidate_cases)}
    for pk in found.candidate_cases:
        node = nodes.get(pk)
        cited = set(node.article_pks) if node else set()
        if cited and cited <= failed or (node and not set(node.charges) & verified_charges):
            result.pruned.append(Pruned("case", pk, "none of its articles or charges survived the audit",
                                        reasons.why(reasons.PRUNED_CASE)))
        else:
            result.verified_cases.append(pk)
    for charge, _p in found.prejudged:
        if charge not in verified_charges:
            result.pruned.append(Pruned("charge", charge, "no article defining it was verified",
                                        reasons.why(reasons.PRUNED_CHARGE)))
    return result


def _key(node: ArticleNode) -> str:
    return f"{node.number}-{node.sub}" if node.sub else str(node.number)


# --- evidence and verification -------------------------------------------------

def number_evidence(audit_result: Audit, graph: GraphStore, *, max_cases: int = 3, max_interpretations: int = 2,
                    excluded_interpretations: frozenset[int] = frozenset()) -> list[Evidence]:
    """Number the verified material: articles, their satisfied checklist items and
    interpretations, then verified precedents. Only these can be cited. A reviewer may
    exclude interpretations (``excluded_interpretations``) in a what-if."""
    evidence: list[Evidence] = []

    def add(kind: str, ref: str, pk: int, text: str):
        evidence.append(Evidence(n=len(evidence) + 1, kind=kind, ref=ref, pk=pk, text=text))

    for a in audit_result.verified:
        add("article", a.key, a.article_pk, f"{a.label}　{a.text}")
        for item in a.items:
            if item.satisfied:
                add("checklist", a.key, item.item_pk, f"{item.question}：{item.span_text or item.reasoning}")
        kept = [i for i in graph.interpretations(a.article_pk) if i.pk not in excluded_interpretations]
        for interp in kept[:max_interpretations]:
            add("interpretation", a.key, interp.pk, f"{interp.source}{interp.para}　{interp.text}")
    nodes = {n.pk: n for n in graph.cases(audit_result.verified_cases[:max_cases])}
    for pk in audit_result.verified_cases[:max_cases]:
        node = nodes.get(pk)
        if node:
            term = _term_text(node.term)
            add("precedent", node.ext_id, pk, f"{node.ext_id}：{'、'.join(node.charges)}；{term}")
    return evidence


def _term_text(term: Term | None) -> str:
    if term is None:
        return "刑期不详"
    if term.death:
        return "死刑"
    if term.life:
        return "无期徒刑"
    return f"{term.months}个月"


_CITATION = re.compile(r"\[(\d+)\]")


def verify_judgment(judgment: Judgment, audit_result: Audit, case: CaseInput) -> Judgment:
    """INV-8: every citation resolves, every article is verified and in force, charges come from verified articles,
    and the term stays within what the verified articles provide (F5: capped, with a note saying so)."""
    if judgment.status != Status.JUDGED:
        return judgment
    numbers = {e.n for e in judgment.evidence}
    cited = [int(n) for n in _CITATION.findall(judgment.reasoning)]
    unresolved = sorted({n for n in cited if n not in numbers})
    if unresolved or not cited:
        what = f"citations {unresolved} do not resolve to verified evidence" if unresolved else "the reasoning cites no evidence"
        return replace(judgment, status=Status.UNRESOLVED_CITATION, message=what)
    verified = {a.article_pk: a for a in audit_result.verified}
    by_key = {a.key: a for a in audit_result.verified}
    unknown = [k for k in judgment.article_keys if k not in by_key]
    if unknown or any(pk not in verified for pk in judgment.article_pks):
        return replace(judgment, status=Status.UNRESOLVED_CITATION,
                       message=f"articles {unknown or judgment.article_pks} were not verified by the Auditor")
    not_in_force = [by_key[k].label for k in judgment.article_keys if not by_key[k].in_force]
    if not_in_force:
        return replace(judgment, status=Status.NOT_IN_FORCE, message=f"{', '.join(not_in_force)} not in force on {case.offence_date}")
    allowed = {c for a in audit_result.verified for c in a.charges}
    stray = [c for c in judgment.charges if c not in allowed]
    if stray or not judgment.charges:
        return replace(judgment, status=Status.UNRESOLVED_CITATION,
                       message=f"charges {stray} are not defined by any verified article" if stray else "no charge")
    judgment = replace(judgment, citations=sorted(set(cited)))
    return _within_statutory_range(judgment, [by_key[k] for k in judgment.article_keys], audit_result.verified)


def _within_statutory_range(judgment: Judgment, cited: list[ArticleAudit], verified: list[ArticleAudit]) -> Judgment:
    """Cap the term at the maximum the articles for its charges provide (Article 69 for several charges).

    Each charge is measured by the cited articles defining it, else by any verified article defining it.
    Mitigation may go below an article's minimum, so the lower end is not enforced.
    """
    if judgment.term is None:
        return judgment
    ranges: dict[str, list] = {}
    for charge in judgment.charges:
        defining = [a for a in cited if charge in a.charges] or [a for a in verified if charge in a.charges]
        ranges[charge] = [sentencing.statutory_range(a.text) for a in defining]
    ceiling = sentencing.ceiling_for(ranges)
    if ceiling is None:
        return judgment
    term, note = sentencing.cap_term(judgment.term, ceiling)
    if not note:
        return judgment
    message = f"{judgment.message}; {note}" if judgment.message else note
    return replace(judgment, term=term, message=message)


# --- the whole run ----------------------------------------------------------------

@dataclass
class _Clock:
    costs: list[StageCost] = field(default_factory=list)
    progress: Progress | None = None
    defendant: str = ""

    def stage(self, name: str, strategy: Strategy, fn, *args, **kwargs):
        if self.progress:
            self.progress("stage", {"defendant": self.defendant, "stage": name})
        before = strategy.usage()
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            after = strategy.usage()
            calls = prompt = completion = 0
            for stage_name, (c, p, q) in after.items():
                c0, p0, q0 = before.get(stage_name, (0, 0, 0))
                calls, prompt, completion = calls + c - c0, prompt + p - p0, completion + q - q0
            self.costs.append(StageCost(stage=name, seconds=round(time.perf_counter() - start, 4), llm_calls=calls,
                                        prompt_tokens=prompt, completion_tokens=completion))


def adjudicate(case: CaseInput, defendant: str, *, strategy: Strategy, graph: GraphStore, retriever: Retriever,
               params: Params = Params(), progress: Progress | None = None, researcher=None) -> Bundle:
    """Run the pipeline for one defendant and return the complete evidence bundle.

    ``researcher`` replaces the fixed Researcher (same signature as :func:`research`): the agentic
    mode's planner loop (worker.agents.agentic). Its evidence goes to the same Auditor and Adjudicator.

    ``progress(event, detail)`` is called when a stage starts (event "stage") and after each
    audited article (event "article"). It may raise to abort the run (a cancelled run): the
    exception propagates to the caller; no bundle is returned.
    """
    bundle = Bundle(case=case, defendant=defendant, strategy=strategy.name, params=asdict(params),
                    versions={"pipeline": PIPELINE_VERSION, **strategy.versions()})
    clock = _Clock(bundle.costs, progress, defendant)
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
            bundle.judgment = Judgment(status=Status.NO_EVIDENCE, message="retrieval found no candidate article")
            return bundle
        bundle.audit = clock.stage("auditor", strategy, audit, case, focus, bundle.research, strategy, graph=graph, params=params,
                                   progress=progress)
        if not bundle.audit.verified:
            not_in_force = [a for a in bundle.audit.articles if not a.in_force]
            status = Status.NOT_IN_FORCE if not_in_force and len(not_in_force) == len(bundle.audit.articles) else Status.INSUFFICIENT_EVIDENCE
            bundle.judgment = Judgment(status=status, message="the Auditor verified no candidate article")
            return bundle
        evidence = number_evidence(bundle.audit, graph)
        judgment = clock.stage("adjudicator", strategy, strategy.adjudicate, focus, bundle.audit, bundle.research, evidence, graph)
        bundle.judgment = verify_judgment(judgment, bundle.audit, case)
    except StageFailure as failure:
        bundle.judgment = Judgment(status=failure.status, message=failure.message)
    finally:
        # Prompts and raw replies, so the run can be replayed and audited.
        bundle.llm_records = list(strategy.records)
    return bundle


def _research_choices(strategy: Strategy, researcher) -> dict:
    """The LLM strategy's community pick and case selection, for the fixed Researcher only."""
    if researcher is not None:
        return {}
    return {"pick_community": strategy.pick_community, "select_cases": strategy.select_cases}


def adjudicate_case(case: CaseInput, **kwargs) -> list[Bundle]:
    """One bundle per defendant (one for the whole case when no defendant is named)."""
    return [adjudicate(case, d, **kwargs) for d in (case.defendants or ("",))]
