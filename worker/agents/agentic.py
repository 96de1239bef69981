"""The agentic retrieval mode (Legal-R1): a planner chooses the next source until the evidence suffices.

Instead of the fixed Researcher's four paths, a planner loop chooses one action per step —
search statutes, search judicial interpretations, search precedents, or stop — with a query
aimed at that source. Each search is a hybrid retrieval with reranking:

- statutes: BM25 + dense over article texts, fused as in LexPath, intent-reranked; an
  offence named in the query also brings the articles defining it (a lookup in the graph);
- interpretations: BM25 over the interpretation paragraphs fused with the interpretations
  of the articles the dense retriever finds for the query, intent-reranked; every hit
  brings the articles it interprets;
- precedents: similar cases in the ontology space (and, for an offence named in the query,
  its cases scored against the query), reranked by court authority (worker.agents.models.priors).

The loop is capped in steps (``max_steps``) and planner LLM calls (``max_planner_calls``);
an empty query, an unknown action or a search already made is refused and recorded, never
run. Every step — the state before it, the action, the query, the results with scores — is
recorded in the Research (``steps``), so the evidence bundle shows how the evidence was
found. The result is an ordinary Research: the same Auditor and Adjudicator decide on it,
and the same verifier checks the judgment.

Planners: :class:`LLMPlanner` (the planner prompt through the OpenAI-compatible client, JSON
schema output) and :class:`StatisticalPlanner` (a rule-based sufficiency test, no LLM).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from worker.agents.graph_types import ArticleNode
from worker.agents.models.priors import authority, rank_for_sentencing, sentencing_reference
from worker.agents.pipeline import Params, adjudicate
from worker.agents.ports import GraphStore, Retriever
from worker.agents.prompts.planner import ACTIONS, PLANNER_PROMPT_VERSION, PLANNER_STAGE, SCHEMA, planner_messages
from worker.agents.stages.auditor import key_of
from worker.agents.stages.researcher import is_candidate, retrieval
from worker.agents.strategies.statistical import StatisticalStrategy, names_match
from worker.agents.types import ArticleAudit, Bundle, CaseInput, Hit, PlanStep, Research

AGENTIC_VERSION = "lextrace-agentic/1"
MODES = ("fixed", "agentic")
SOURCE_OF = {"search_statutes": "statutes", "search_interpretations": "interpretations", "search_precedents": "precedents"}


@dataclass(frozen=True)
class AgenticParams:
    max_steps: int = 6  # planner steps, refused ones included
    max_planner_calls: int = 8  # LLM calls of the planner (a rejected reply costs one)
    k: int = 5  # results per search
    keep_cases: int = 3  # precedents kept per precedent search
    alpha: float = 0.4  # sparse weight of the fusion


@dataclass(frozen=True)
class Action:
    action: str
    query: str = ""
    reason: str = ""


class PlannerRefused(Exception):
    """The planner's reply was not a usable action (unparseable, off-schema); the step is refused."""

    def __init__(self, message: str, action: str = "", query: str = ""):
        super().__init__(message)
        self.action, self.query = action, query


class PlannerExhausted(Exception):
    """The planner can make no more calls (the run's LLM budget is spent, or the server is gone)."""


class Planner(Protocol):
    name: str
    calls: int

    def versions(self) -> dict[str, str]: ...
    def next_action(self, state: PlanState) -> Action: ...


def _norm(query: str) -> str:
    return "".join(query.split()).lower()


@dataclass
class PlanState:
    """The evidence gathered so far and what the planner needs to choose the next step."""

    case: CaseInput
    defendant: str
    focus: str
    query_text: str
    prejudged: list[tuple[str, float]]
    graph: GraphStore
    steps: list[PlanStep] = field(default_factory=list)
    articles: dict[int, float] = field(default_factory=dict)  # candidate article pk -> best score
    article_sources: dict[int, set[str]] = field(default_factory=dict)
    interpretations: dict[int, float] = field(default_factory=dict)
    interpreted: dict[int, set[int]] = field(default_factory=dict)  # article pk -> interpretations found for it
    cases: dict[int, float] = field(default_factory=dict)  # precedent pk -> best similarity to a query
    hits: list[Hit] = field(default_factory=list)
    _nodes: dict[int, ArticleNode | None] = field(default_factory=dict)
    _offences: list[str] | None = None

    # -- graph lookups, cached for the run ------------------------------------------
    def node(self, pk: int) -> ArticleNode | None:
        if pk not in self._nodes:
            self._nodes[pk] = self.graph.article(pk)
        return self._nodes[pk]

    def offences(self) -> list[str]:
        if self._offences is None:
            self._offences = sorted(self.graph.offences(), key=lambda name: (-len(name), name))
        return self._offences

    def named_offences(self, query: str) -> list[str]:
        """Offences whose name (with or without 罪) the query contains, longest first, no name inside another."""
        found: list[str] = []
        for name in self.offences():
            bare = name[:-1] if name.endswith("罪") and len(name) > 2 else name
            if (name in query or bare in query) and not any(bare in f for f in found):
                found.append(name)
        return found

    # -- what the evidence covers -----------------------------------------------------
    def executed(self) -> set[tuple[str, str]]:
        return {(s.action, _norm(s.query)) for s in self.steps if s.status == "ok"}

    def searched(self, action: str) -> bool:
        return any(s.action == action and s.status == "ok" for s in self.steps)

    def candidate_charges(self) -> list[str]:
        """The pre-judged charges; without them, the charges of the two best articles found so far
        by a statute search, else of the best precedent found."""
        if self.prejudged:
            return [c for c, _ in self.prejudged]
        searched = [pk for pk in self.articles if "statutes" in self.article_sources.get(pk, set())]
        best = sorted(searched, key=lambda pk: (-self.articles[pk], pk))[:2]
        charges = [c for pk in best for c in (self.node(pk).charges if self.node(pk) else ())]
        if not charges and self.cases:
            top = max(self.cases, key=lambda pk: (self.cases[pk], -pk))
            charges = list(self.graph.case(top).charges) if self.graph.case(top) else []
        return list(dict.fromkeys(charges))

    def articles_for(self, charge: str) -> list[int]:
        return [pk for pk in sorted(self.articles, key=lambda p: (-self.articles[p], p))
                if any(names_match(charge, c, {}) for c in (self.node(pk).charges if self.node(pk) else ()))]

    def precedent_charges(self) -> set[str]:
        return {c for pk in self.cases for c in (self.graph.case(pk).charges if self.graph.case(pk) else ())}

    def uncovered_by_precedents(self) -> list[str]:
        have = self.precedent_charges()
        return [c for c in self.candidate_charges() if not any(names_match(c, h, {}) for h in have)]

    def summary(self) -> dict:
        charges = self.candidate_charges()
        return {
            "candidate_charges": charges,
            "charges_without_article": [c for c in charges if not self.articles_for(c)],
            "charges_without_precedent": self.uncovered_by_precedents(),
            "articles": len(self.articles), "interpretations": len(self.interpretations), "precedents": len(self.cases),
        }


# --- the three sources ------------------------------------------------------------------------


class Sources:
    """Runs one search of one source and adds what it finds to the state."""

    def __init__(self, state: PlanState, *, retriever: Retriever, params: Params, agentic: AgenticParams, intents=None):
        self.state, self.retriever, self.params, self.agentic = state, retriever, params, agentic
        self.rerank_kwargs = {"classifier": intents} if intents is not None else {}

    def _add_article(self, pk: int, score: float, source: str) -> None:
        if is_candidate(self.state.node(pk), self.params):
            self.state.articles[pk] = max(self.state.articles.get(pk, 0.0), score)
            self.state.article_sources.setdefault(pk, set()).add(source)

    def _article_row(self, pk: int, score: float) -> dict:
        node = self.state.node(pk)
        return {"kind": "article", "pk": pk, "label": node.label if node else f"#{pk}", "score": round(score, 6),
                "detail": "、".join(node.charges) if node else ""}

    def statutes(self, query: str) -> list[dict]:
        k, graph = self.agentic.k, self.state.graph
        sparse = dict(self.retriever.articles_sparse(query, 2 * k))
        dense = dict(self.retriever.articles_dense(query, 2 * k))
        fused = retrieval.fuse(sparse, dense, alpha=self.agentic.alpha)
        for charge in self.state.named_offences(query):  # the graph's answer to a charge named in the query
            for a in graph.articles_defining(charge):
                fused[a.pk] = max(fused.get(a.pk, 0.0), 1.0)
        texts = {pk: " ".join(t.text for t in graph.article_texts(pk)[-1:]) for pk in fused}
        ranked = retrieval.rerank_by_intent(query, fused, texts, **self.rerank_kwargs)[:k]
        for pk, score in ranked:
            self._add_article(pk, score, "statutes")
        return [self._article_row(pk, score) for pk, score in ranked]

    def interpretations(self, query: str) -> list[dict]:
        k, graph = self.agentic.k, self.state.graph
        sparse = dict(self.retriever.interpretations_sparse(query, 2 * k))
        dense: dict[int, float] = {}
        nodes = {}
        for article_pk, score in self.retriever.articles_dense(query, k):
            for interp in graph.interpretations(article_pk):
                nodes[interp.pk] = interp
                dense[interp.pk] = max(dense.get(interp.pk, float("-inf")), score)
        fused = retrieval.fuse(sparse, dense, alpha=self.agentic.alpha)
        linked = {pk: graph.interpreted_articles(pk) for pk in fused}
        for pk, articles in linked.items():
            if pk not in nodes:
                for a in articles[:1]:
                    nodes.update({i.pk: i for i in graph.interpretations(a.pk)})
        texts = {pk: nodes[pk].text if pk in nodes else "" for pk in fused}
        ranked = retrieval.rerank_by_intent(query, fused, texts, **self.rerank_kwargs)[:k]
        rows = []
        for pk, score in ranked:
            self.state.interpretations[pk] = max(self.state.interpretations.get(pk, 0.0), score)
            for a in linked[pk]:
                self._add_article(a.pk, score, "interpretations")
                self.state.interpreted.setdefault(a.pk, set()).add(pk)
            node = nodes.get(pk)
            rows.append({"kind": "interpretation", "pk": pk, "label": f"{node.source}{node.para}" if node else f"#{pk}",
                         "score": round(score, 6), "detail": "、".join(a.label for a in linked[pk])})
        return rows

    def precedents(self, query: str) -> list[dict]:
        k, graph, case = self.agentic.k, self.state.graph, self.state.case

        def is_self(pk: int) -> bool:
            if not (self.params.exclude_self and case.ref):
                return False
            node = graph.case(pk)
            return node is not None and case.left_out(node.ext_id)

        scored = dict(self.retriever.similar_cases(query, 2 * k))
        for charge in self.state.named_offences(query):
            members = [c.pk for c in graph.cases_of_offence(charge, limit=200)]
            for pk, score in self.retriever.case_scores(query, members)[:k]:
                scored[pk] = max(scored.get(pk, float("-inf")), score)
        rows = []
        weighted = []
        for pk, score in scored.items():
            node = graph.case(pk)
            if node is None or is_self(pk):
                continue
            weighted.append((pk, node, score * authority(node.court_level), score))
        weighted.sort(key=lambda t: (-t[2], t[0]))
        for pk, node, score, similarity in weighted[: self.agentic.keep_cases]:
            self.state.cases[pk] = max(self.state.cases.get(pk, float("-inf")), similarity)
            for a in graph.articles_of_case(pk):
                self._add_article(a.pk, 0.0, "case")
            rows.append({"kind": "case", "pk": pk, "label": node.ext_id, "score": round(score, 6),
                         "similarity": round(similarity, 6), "authority": authority(node.court_level),
                         "detail": "、".join(node.charges)})
        return rows

    def run(self, action: str, query: str) -> list[dict]:
        return getattr(self, SOURCE_OF[action].split("_")[-1])(query)


# --- planners -------------------------------------------------------------------------------------


class StatisticalPlanner:
    """Rule-based sufficiency test, no LLM. In order, the first gap found decides the next search:

    1. nothing searched yet → the statutes, with the focused facts;
    2. no candidate charge (no pre-judged charge, no article found) → the precedents, with the case
       features (their charges become the candidates); a candidate charge without a retrieved article
       defining it → the statutes, with the charge and the case features;
    3. a candidate charge whose best article has checklist items the lexical check does not find
       supported in the facts, or has no checklist → the interpretations (they define thresholds
       such as 数额较大 and forms such as 入户盗窃), with the charge and the open questions; once per
       article: after that the Auditor decides the items with the interpretations in hand;
    4. a candidate charge that no retrieved precedent was convicted of → the precedents, with
       the case features and the charge;
    5. otherwise stop: every candidate charge has an article whose items are all decided, and
       precedents cover the candidate charges.

    A search already made is not proposed again, so the test always ends.
    """

    name = "statistical"

    def __init__(self, checker=None):
        self.checker = checker or StatisticalStrategy()  # anything with verify_items (the lexical item check)
        self.calls = 0

    def versions(self) -> dict[str, str]:
        return {"planner": "statistical/1"}

    def _undecided(self, state: PlanState, article_pk: int) -> list[str] | None:
        """Questions of the article's checklist the lexical check leaves open (None: no checklist)."""
        node = state.node(article_pk)
        items = state.graph.checklist(article_pk)
        if not items:
            return None
        stub = ArticleAudit(article_pk=article_pk, key=key_of(node), label=node.label, charges=list(node.charges),
                            version_pk=None, text="", in_force=True)
        verdicts = self.checker.verify_items(state.focus, stub, items)
        return [v.question.replace("是否", "") for v in verdicts if not v.satisfied]

    def next_action(self, state: PlanState) -> Action:
        done = state.executed()

        def fresh(action: str, query: str) -> bool:
            return bool(query.strip()) and (action, _norm(query)) not in done

        if not state.searched("search_statutes"):
            return Action("search_statutes", state.focus[:200], "nothing retrieved yet")
        charges = state.candidate_charges()
        if not charges and not state.searched("search_precedents") and state.query_text.strip():
            return Action("search_precedents", state.query_text[:200], "no candidate charge: ask the precedents")
        for charge in charges:
            query = f"{charge} {state.query_text}".strip()
            if not state.articles_for(charge) and fresh("search_statutes", query):
                return Action("search_statutes", query, f"no article defining {charge} yet")
        for charge in charges:
            found = state.articles_for(charge)
            if not found:
                continue
            best = found[0]
            if state.interpreted.get(best):
                continue  # its interpretations are in hand: the Auditor decides the rest
            open_items = self._undecided(state, best)
            if open_items is None or open_items:
                query = f"{charge} {' '.join(open_items or [])}".strip()[:200]
                if fresh("search_interpretations", query):
                    why = "no checklist" if open_items is None else f"{len(open_items)} checklist items undecided"
                    return Action("search_interpretations", query, f"{state.node(best).label}: {why}")
        for charge in state.uncovered_by_precedents():
            query = f"{state.query_text} {charge}".strip()
            if fresh("search_precedents", query):
                return Action("search_precedents", query, f"no precedent convicted of {charge}")
        return Action("stop", "", "every candidate charge has a decided article and a precedent")


class LLMPlanner:
    """The planner prompt (worker/agents/prompts/planner.py) through the OpenAI-compatible client."""

    name = "llm"

    def __init__(self, client, *, lang: str = "zh", records: list | None = None):
        """``records``: where each exchange is recorded (the strategy's ``records``, so that the bundle's
        ``llm_records`` hold the planner's replies too and a replay can answer them)."""
        self.client = client
        self.lang = lang
        self.calls = 0
        self.records = records if records is not None else []

    def versions(self) -> dict[str, str]:
        return {"planner": "llm/1", "planner_prompts": PLANNER_PROMPT_VERSION}

    def next_action(self, state: PlanState) -> Action:
        from worker.agents.llm import BudgetExceeded, LLMError, ModelOutputInvalid

        history = [dataclasses.asdict(s) for s in state.steps]
        messages = planner_messages(self.lang, facts=state.focus, defendant=state.defendant, prejudged=state.prejudged,
                                    history=history)
        self.calls += 1
        prompt = {"stage": PLANNER_STAGE, "lang": self.lang, "version": PLANNER_PROMPT_VERSION}
        try:
            result = self.client.complete_json(messages, SCHEMA, name=PLANNER_STAGE, stage=PLANNER_STAGE)
        except BudgetExceeded as exc:
            raise PlannerExhausted(str(exc)) from exc
        except ModelOutputInvalid as exc:
            self.records.append({"prompt": prompt, "error": str(exc), "raw": getattr(exc, "raw_text", "")})
            raise PlannerRefused(f"the planner's reply was not a valid action: {exc}") from exc
        except LLMError as exc:
            raise PlannerExhausted(str(exc)) from exc
        if hasattr(result, "record"):
            self.records.append({"prompt": prompt, "result": result.record()})
        value = result.value if isinstance(result.value, dict) else {}
        return Action(str(value.get("action", "")), str(value.get("query", "")), str(value.get("reason", "")))


# --- the loop ---------------------------------------------------------------------------------------


class AgenticResearcher:
    """A drop-in for the Researcher (stages.researcher.research): the planner loop, with the same call signature."""

    def __init__(self, planner: Planner, *, agentic: AgenticParams = AgenticParams(), defendant: str = "",
                 progress: Callable[[str, dict], None] | None = None):
        self.planner, self.agentic, self.defendant, self.progress = planner, agentic, defendant, progress

    def __call__(self, case: CaseInput, focus: str, features: dict, query_text: str, prejudged: list[tuple[str, float]],
                 *, graph: GraphStore, retriever: Retriever, params: Params, intents=None, **_ignored) -> Research:
        state = PlanState(case=case, defendant=self.defendant, focus=focus, query_text=query_text,
                          prejudged=list(prejudged), graph=graph)
        sources = Sources(state, retriever=retriever, params=params, agentic=self.agentic, intents=intents)
        seen: set[tuple[str, int]] = set()
        while True:
            n = len(state.steps) + 1
            summary = state.summary()
            if len(state.steps) >= self.agentic.max_steps:
                state.steps.append(PlanStep(n, summary, "stop", status="cap_steps",
                                            refused=f"step cap {self.agentic.max_steps} reached"))
                break
            if self.planner.calls >= self.agentic.max_planner_calls:
                state.steps.append(PlanStep(n, summary, "stop", status="cap_calls",
                                            refused=f"planner call cap {self.agentic.max_planner_calls} reached"))
                break
            calls_before = self.planner.calls
            done = state.executed()
            try:
                action = self.planner.next_action(state)
            except PlannerRefused as exc:
                state.steps.append(PlanStep(n, summary, exc.action or "?", exc.query, status="rejected", refused=str(exc),
                                            planner_calls=self.planner.calls - calls_before))
                continue
            except PlannerExhausted as exc:
                state.steps.append(PlanStep(n, summary, "stop", status="budget", refused=str(exc),
                                            planner_calls=self.planner.calls - calls_before))
                break
            step = PlanStep(n, summary, action.action, action.query.strip(), action.reason,
                            planner_calls=self.planner.calls - calls_before)
            state.steps.append(step)
            if action.action not in ACTIONS:
                step.status, step.refused = "rejected", f"unknown action {action.action!r}; allowed: {', '.join(ACTIONS)}"
                continue
            if action.action == "stop":
                step.status = "stop"
                break
            if not step.query:
                step.status, step.refused = "rejected", "empty query"
                continue
            if (action.action, _norm(step.query)) in done:
                step.status, step.refused = "repeated", "the same search was already made; its results are above"
                continue
            step.results = sources.run(action.action, step.query)
            step.new = sum(1 for r in step.results if (r["kind"], r["pk"]) not in seen)
            seen.update((r["kind"], r["pk"]) for r in step.results)
            path = SOURCE_OF[action.action]
            state.hits.extend(Hit(path=f"plan-{path}", kind=r["kind"], pk=r["pk"], score=r["score"], label=r["label"])
                              for r in step.results)
            if self.progress:
                self.progress("step", {"defendant": self.defendant, "stage": "planner", "step": n, "action": action.action,
                                       "query": step.query[:200], "results": len(step.results), "new": step.new})
        return self._research(state, focus, features, query_text, prejudged, graph)

    def _research(self, state: PlanState, focus, features, query_text, prejudged, graph: GraphStore) -> Research:
        result = Research(focus=focus, features=features, query_text=query_text, prejudged=list(prejudged))
        result.hits = state.hits
        result.steps = state.steps
        nodes = {pk: state.node(pk) for pk in state.articles}
        result.candidate_articles = sorted(state.articles, key=lambda pk: (nodes[pk].number, nodes[pk].sub, pk))
        result.article_sources = {pk: sorted(v) for pk, v in state.article_sources.items() if pk in state.articles}
        # Precedents in sentencing order (similarity × authority, sharing a candidate charge first): the
        # Auditor keeps this order and the Adjudicator cites the first verified ones.
        cases = [(graph.case(pk), similarity) for pk, similarity in state.cases.items() if graph.case(pk) is not None]
        ranked = rank_for_sentencing(cases, state.candidate_charges(), matches=lambda a, b: names_match(a, b, {}))
        result.candidate_cases = [r.pk for r in ranked]
        result.sentencing = {"ranked": [dataclasses.asdict(r) for r in ranked], "reference": sentencing_reference(ranked)}
        return result


def planner_for(strategy, *, lang: str = "zh") -> Planner:
    """The planner that matches a strategy: the LLM planner on the strategy's own client (one budget per
    case), else the statistical planner with the strategy's lexical item check."""
    if strategy.name == "llm" and strategy.client is not None:
        return LLMPlanner(strategy.client, lang=strategy.lang, records=strategy.records)
    return StatisticalPlanner(strategy if strategy.name == "statistical" else None)


def adjudicate_agentic(case: CaseInput, defendant: str, *, strategy, graph: GraphStore, retriever: Retriever,
                       params: Params | None = None, agentic: AgenticParams = AgenticParams(),
                       planner: Planner | None = None, progress=None) -> Bundle:
    """The pipeline for one defendant with the planner loop as its Researcher."""
    params = params or Params.for_ablation("full", paths=strategy.paths)
    planner = planner or planner_for(strategy)
    researcher = AgenticResearcher(planner, agentic=agentic, defendant=defendant, progress=progress)
    bundle = adjudicate(case, defendant, strategy=strategy, graph=graph, retriever=retriever, params=params,
                        progress=progress, researcher=researcher)
    bundle.params = {**bundle.params, "mode": "agentic", "agentic": dataclasses.asdict(agentic)}
    bundle.versions = {**bundle.versions, "mode": AGENTIC_VERSION, **planner.versions()}
    return bundle


def adjudicate_case_agentic(case: CaseInput, *, planner_factory: Callable[[], Planner] | None = None, **kwargs) -> list[Bundle]:
    """One bundle per defendant, each with a fresh planner (a planner counts its own calls)."""
    return [adjudicate_agentic(case, d, planner=planner_factory() if planner_factory else None, **kwargs)
            for d in (case.defendants or ("",))]


def agentic_summary(bundle: Bundle) -> dict:
    """Steps and planner calls of one bundle, for evaluation and display."""
    steps = bundle.research.steps if bundle.research else []
    return {"steps": sum(1 for s in steps if s.status not in ("cap_steps", "cap_calls")),
            "searches": sum(1 for s in steps if s.status == "ok"),
            "planner_calls": sum(int(s.planner_calls or 0) for s in steps),
            "capped": any(s.status in ("cap_steps", "cap_calls", "budget") for s in steps)}
