"""What a strategy is: the stages it must implement and every optional feature it may offer, declared
here with its "off" value, so the pipeline reads attributes instead of probing for them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worker.agents.graph_types import ChecklistEntry
    from worker.agents.ports import GraphStore
    from worker.agents.types import ArticleAudit, Audit, CaseInput, Evidence, ItemVerdict, Judgment, Research


class Strategy:
    """What differs between the statistical and the LLM strategy (worker/agents/strategies/registry.py)."""

    name: str = ""

    # --- optional features (None / 0 / empty: the strategy does not offer it) ---
    prejudge_k: int = 0  # pre-judged charges it wants beyond Params.max_charges
    # The Researcher's paths of its full pipeline (stages/researcher/paths.py); None: every registered default path.
    paths: tuple[str, ...] | None = None
    intent_classifier: Any = None  # reranks the article path by the facts' intent (else the cue rules)
    expand_keywords: Callable[[str], list[str]] | None = None  # IRAC keywords for the sparse article search
    # The statute charges a pre-judged label stands for, when no article defines the label itself (R_chg)
    statute_charges_of: Callable[[str], list[str]] | None = None
    pick_community: Callable | None = None  # chooses the community of R_com among the best scored
    select_cases: Callable | None = None  # keeps the most similar precedents of R_sem
    client: Any = None  # the LLM client (the agentic mode's LLM planner uses it)
    lang: str = "zh"  # prompt language
    records: tuple | list = ()  # prompts and raw replies of the calls made, stored in the bundle

    # --- the stages ---
    def versions(self) -> dict[str, str]:
        raise NotImplementedError

    def focus(self, case: CaseInput, defendant: str) -> str:
        raise NotImplementedError

    def features(self, focus: str) -> tuple[dict[str, list[str]], str]:
        raise NotImplementedError

    def prejudge(self, focus: str, k: int) -> list[tuple[str, float]]:
        raise NotImplementedError

    def verify_items(self, focus: str, article: ArticleAudit, items: list[ChecklistEntry]) -> list[ItemVerdict]:
        raise NotImplementedError

    def verify_checklists(self, focus: str, pairs: list[tuple[ArticleAudit, list[ChecklistEntry]]]) -> None:
        """Set the items of every candidate article. One article at a time unless a strategy can check
        several together (the LLM strategy batches them into as few calls as its context allows)."""
        for article, items in pairs:
            article.items = self.verify_items(focus, article, items)

    def decide_articles(self, focus: str, articles: list[ArticleAudit], research: Research, graph: GraphStore,
                        on_decided: Callable[[ArticleAudit], None]) -> None:
        """Set passed, score, reason and why of every article (their items are verified); call
        ``on_decided`` after each."""
        raise NotImplementedError

    def adjudicate(self, focus: str, audit: Audit, research: Research, evidence: list[Evidence],
                   graph: GraphStore) -> Judgment:
        raise NotImplementedError

    def usage(self) -> dict[str, tuple[int, int, int]]:  # stage -> (calls, prompt tokens, completion tokens)
        return {}

    def classify(self, focus: str) -> Judgment:  # the classifier_only baseline (statistical strategy)
        raise NotImplementedError(f"the {self.name} strategy has no classifier baseline")
