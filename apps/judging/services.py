"""Judging: the one place that wires the pure reasoning core to the database (strategy, graph store,
retriever). Runs (apps/cases/services/runs.py), evaluation (apps/evaluation/services/evaluating.py),
what-ifs (apps/review/services/reviews.py) and replays call `judgment_compute`, `judgment_whatif`
and `bundle_replay` here; nobody else builds a strategy.

The statistical strategy is the default where no LLM is configured; its
trained models come from the model registry when one is active (see training/).
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache

from apps.corpus.search_service import legal_tokenizer
from apps.graph.retriever import DbRetriever
from apps.graph.store import AgeGraphStore
from worker.agents.names import MODES, STRATEGIES
from worker.agents.pipeline import Params, adjudicate_case
from worker.agents.stages.auditor.amounts import standards
from worker.agents.stages.auditor.elements import ElementChecker
from worker.agents.strategies.base import Strategy
from worker.agents.strategies.registry import STRATEGY_CLASSES
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.types import Bundle, CaseInput

logger = logging.getLogger(__name__)

__all__ = ["MODES", "STRATEGIES", "bundle_replay", "judgment_compute", "judgment_whatif", "llm_client",
           "statistical_strategy", "statistical_strategy_shared", "strategy_build", "whatif_preload"]


@lru_cache(maxsize=1)
def _tokenizer():
    return legal_tokenizer()


def active_models() -> dict:
    """kind → loaded model, for the kinds that have an active registered version."""
    from apps.registry.services import load_active_models

    return load_active_models()


def charge_aliases() -> dict[str, str]:
    """Dataset charge name → statute charge name (Charge.canonical)."""
    from apps.corpus.models import Charge

    return dict(Charge.objects.filter(canonical__isnull=False).values_list("name", "canonical__name"))


def statute_charges() -> set[str]:
    """The charge names the statutes define (official names)."""
    from apps.corpus.models import Charge

    return set(Charge.objects.filter(official=True).values_list("name", flat=True))


_ELEMENTS: dict[tuple, ElementChecker] = {}


def element_checker() -> ElementChecker:
    """The element check with word frequencies over every checklist item of the corpus, the share of precedents
    using each of their words and the articles those precedents cite (the active BM25 index), and the amount
    standards the interpretations set for each article (rebuilt when the checklists, the interpretations or the
    precedents' index change)."""
    from django.db.models import Count, Max

    from apps.corpus.models import ChecklistItem, Interpretation, SearchIndex
    from apps.corpus.search_service import precedent_word_articles, precedent_word_shares

    items = ChecklistItem.objects.filter(variant="main")
    stamp = (*items.aggregate(n=Count("pk"), top=Max("pk")).values(),
             *Interpretation.objects.aggregate(n=Count("pk"), top=Max("pk")).values(),
             SearchIndex.objects.filter(target=SearchIndex.Target.PRECEDENTS, method=SearchIndex.Method.BM25,
                                        active=True).values_list("pk", flat=True).first())
    if stamp not in _ELEMENTS:
        _ELEMENTS.clear()
        _ELEMENTS[stamp] = ElementChecker.from_items(items.values_list("question", flat=True), tokenize=_tokenizer().tokens,
                                                     standards=amount_standards(), fact_share=precedent_word_shares,
                                                     word_articles=precedent_word_articles)
    return _ELEMENTS[stamp]


def amount_standards() -> dict[int, dict]:
    """Article pk → the amount standards its linked interpretations set (worker/agents/stages/auditor/amounts.py)."""
    from apps.corpus.models import Interpretation

    texts: dict[tuple[int, int], list[str]] = {}
    for text, pk, number in Interpretation.objects.filter(articles__isnull=False).values_list(
            "text", "articles__pk", "articles__number"):
        texts.setdefault((pk, number), []).append(text)
    found = {pk: standards(chunk, number) for (pk, number), chunk in texts.items()}
    return {pk: s for pk, s in found.items() if s}


def statistical_strategy(models: dict | None = None) -> StatisticalStrategy:
    """The statistical strategy with the active models (or ``models``: kind → loaded model, e.g. the
    out-of-fold models of a training run)."""
    models = active_models() if models is None else models
    return StatisticalStrategy(tokenize=_tokenizer().tokens, charge_model=models.get("charges"),
                               article_model=models.get("articles"), term_model=models.get("term"),
                               verifier=models.get("verifier"), intent_model=models.get("intent"),
                               auditor=models.get("auditor"), elements=element_checker(),
                               aliases=charge_aliases(), statute_charges=statute_charges())


def llm_client(*, per_case_budget: bool = True):
    """A client for the configured OpenAI-compatible server (vLLM in production)."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from worker.agents.llm import Budget, LLMClient

    if not settings.LLM_BASE_URL:
        raise ImproperlyConfigured("no LLM is configured: set LEXTRACE_LLM_BASE_URL and LEXTRACE_LLM_MODEL")
    budget = Budget(max_calls=settings.LLM_MAX_CALLS_PER_CASE, max_tokens=settings.LLM_MAX_TOKENS_PER_CASE) if per_case_budget else None
    from apps.core.operations import model_circuit

    # One breaker for all processes: when the server is down, no worker keeps knocking on it.
    return LLMClient(settings.LLM_BASE_URL, settings.LLM_MODEL, api_key=settings.LLM_API_KEY or None,
                     timeout_s=settings.LLM_TIMEOUT_S, max_tokens=settings.LLM_MAX_REPLY_TOKENS, budget=budget,
                     breaker=model_circuit())


def llm_strategy():
    """The LLM strategy on the configured server, with a per-case call and token budget."""
    from django.conf import settings

    return STRATEGY_CLASSES["llm"](llm_client(), checklist_mode=settings.LLM_CHECKLIST_MODE,
                                   keyword_expansion=settings.LLM_KEYWORD_EXPANSION,
                                   research_choices=settings.LLM_RESEARCH_CHOICES,
                                   context_tokens=settings.LLM_CONTEXT_TOKENS)


# kind → how this deployment builds it (the classes are in worker/agents/strategies/registry.py).
_BUILDERS = {"statistical": statistical_strategy, "llm": llm_strategy}
if tuple(_BUILDERS) != STRATEGIES:  # every strategy of worker.agents.names has a builder
    raise ImportError(f"strategy builders {tuple(_BUILDERS)} differ from names.STRATEGIES {STRATEGIES}")


def strategy_build(name: str) -> Strategy:
    """The strategy for one case: a fresh LLM one (it carries a per-case call and token budget); the statistical
    one shared by the process (statistical_strategy_shared: it keeps nothing of one case for the next, and
    building it loads the models, the tokenizer and the element check's statistics)."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    if name == "statistical":
        return statistical_strategy_shared()
    return _BUILDERS[name]()


def agentic_params():
    """The planner loop's caps from the settings (LEXTRACE_AGENTIC_*)."""
    from django.conf import settings

    from worker.agents.agentic import AgenticParams

    return AgenticParams(max_steps=settings.AGENTIC_MAX_STEPS, max_planner_calls=settings.AGENTIC_MAX_PLANNER_CALLS)


def judgment_compute(*, case: CaseInput, strategy: str | Strategy = "statistical", mode: str = "fixed",
                     ablation: str = "full", progress=None, exclude_self: bool = False) -> list[Bundle]:
    """Run the pipeline for every defendant of ``case`` against the live graph and indexes.

    ``strategy``: a name of worker.agents.names.STRATEGIES (built here), or a strategy already built
    (e.g. the statistical one on the out-of-fold models of a training run).
    ``mode``: "fixed" (the Researcher's four paths) or "agentic" (the planner loop of
    worker.agents.agentic, whose planner follows the strategy: the LLM planner for the LLM
    strategy, the rule-based one for the statistical). ``progress(event, detail)`` receives stage
    starts, audited articles and, in the agentic mode, planner steps (see pipeline.adjudicate).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    strategy = strategy_build(strategy) if isinstance(strategy, str) else strategy
    params = Params.for_ablation(ablation, paths=strategy.paths, exclude_self=exclude_self)
    if mode == "agentic":
        from worker.agents.agentic import adjudicate_case_agentic

        return adjudicate_case_agentic(case, strategy=strategy, graph=AgeGraphStore(), retriever=DbRetriever(),
                                       params=params, agentic=agentic_params(), progress=progress)
    return adjudicate_case(case, strategy=strategy, graph=AgeGraphStore(), retriever=DbRetriever(), params=params,
                           progress=progress)


# What statistical_strategy() is built from, in one query: the active models, the checklist items and
# interpretations (as element_checker stamps them), and the charges (the aliases and the names the
# statutes define). The tables are the models' (tests/judging/test_whatif_strategy.py checks the names).
STAMP_TABLES = ("registry_modelversion", "corpus_checklistitem", "corpus_interpretation", "corpus_charge",
                "corpus_searchindex")
_STAMP_SQL = """
SELECT (SELECT coalesce(string_agg(kind || '=' || model_id, ',' ORDER BY kind, model_id), '')
          FROM registry_modelversion WHERE active),
       (SELECT count(*) FROM corpus_checklistitem WHERE variant = 'main'),
       (SELECT max(id) FROM corpus_checklistitem WHERE variant = 'main'),
       (SELECT count(*) FROM corpus_interpretation),
       (SELECT max(id) FROM corpus_interpretation),
       (SELECT md5(coalesce(string_agg(id || '|' || name || '|' || coalesce(canonical_id::text, '') || '|'
                                       || official::text, ',' ORDER BY id), ''))
          FROM corpus_charge),
       (SELECT max(id) FROM corpus_searchindex WHERE active AND target = 'precedents' AND method = 'bm25')
"""


def _statistical_stamp() -> tuple:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(_STAMP_SQL)
        return tuple(cursor.fetchone())


_SHARED_LOCK = threading.Lock()
_SHARED: dict = {}


def statistical_strategy_shared() -> StatisticalStrategy:
    """The statistical strategy with the active models, built once per process (models loaded, element
    checker, aliases) and built again when what it is built from changes: one query per call checks
    (``_statistical_stamp``). For the what-ifs of the web process, which run only its Adjudicator: the
    strategy keeps nothing of one case for the next but the views of the texts it has seen
    (StatisticalStrategy._focus_view: tokens and model rankings of a focused text, the same every time)."""
    stamp = _statistical_stamp()
    with _SHARED_LOCK:
        if _SHARED.get("stamp") != stamp:
            _SHARED.update(stamp=stamp, strategy=statistical_strategy())
        return _SHARED["strategy"]


def whatif_preload() -> None:
    """Build the shared strategy of the what-ifs now (a web process calls this in a background thread
    when it starts: legalsite/wsgi.py), so that no reviewer's override waits for the tokenizer, the
    checklist statistics and the models to load. A failure is logged: the first what-if builds it then."""
    from django.db import connection

    try:
        _tokenizer()
        statistical_strategy_shared()
    except Exception:  # noqa: BLE001 - a background warm-up: the request path builds what is missing
        logger.warning("the what-if strategy was not preloaded", exc_info=True)
    finally:
        connection.close()


def judgment_whatif(*, bundle: Bundle | dict, overrides, strategy: str) -> Bundle:
    """Only the Adjudicator again on a stored bundle (as stored, or read with Bundle.from_dict: the
    Adjudicator may change that one) with a reviewer's overrides (worker.agents.tools.whatif);
    nothing is retrieved or verified again. Raises OverrideInvalid for an override that does not apply.
    The statistical strategy is the process's shared one; an LLM strategy is built for each what-if (it
    carries a per-case budget): strategy_build decides."""
    from worker.agents.tools.whatif import readjudicate

    return readjudicate(bundle, overrides, strategy=strategy_build(strategy), graph=AgeGraphStore())


def bundle_replay(bundle: Bundle | dict) -> tuple[Bundle, dict[str, int]]:
    """Run a stored bundle's defendant (typed, or as Bundle.to_dict() stored it) again on today's graph:
    an LLM run from its recorded replies (no model is called), a statistical run with the active models.
    Returns the new bundle and the recorded replies the replay did not use, per stage."""
    from worker.agents.pipeline import adjudicate
    from worker.agents.tools.replay import RecordedReplies, params_of

    stored = Bundle.of(bundle)
    if stored.strategy == "llm":
        from worker.agents.prompts.expansion import EXPANSION_STAGE

        stages = {(r.get("prompt") or {}).get("stage") for r in stored.llm_records}
        client = RecordedReplies(stored.llm_records, model=stored.versions.get("model", "replay"))
        # The optional calls the original run made are made again, from their recorded replies.
        strategy = STRATEGY_CLASSES["llm"](client, checklist_mode=stored.versions.get("checklist", "article"),
                                           keyword_expansion=EXPANSION_STAGE in stages,
                                           research_choices=bool(stages & {"pick_community", "rerank_cases"}))
    else:
        client, strategy = None, statistical_strategy()
    if stored.params.get("mode") == "agentic":  # the planner loop again: the LLM planner from its recorded replies
        from worker.agents.agentic import AgenticParams, adjudicate_agentic

        replayed = adjudicate_agentic(stored.case, stored.defendant, strategy=strategy, graph=AgeGraphStore(),
                                      retriever=DbRetriever(), params=params_of(stored),
                                      agentic=AgenticParams(**(stored.params.get("agentic") or {})))
        return replayed, (client.unused() if client else {})
    replayed = adjudicate(stored.case, stored.defendant, strategy=strategy, graph=AgeGraphStore(),
                          retriever=DbRetriever(), params=params_of(stored))
    return replayed, (client.unused() if client else {})
