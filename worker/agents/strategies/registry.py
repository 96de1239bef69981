"""kind → strategy class. A new strategy: subclass worker.agents.strategies.base.Strategy, add it
here and its name to worker.agents.names.STRATEGIES, and its builder to apps/judging/services.py."""

from worker.agents.names import STRATEGIES
from worker.agents.strategies.base import Strategy
from worker.agents.strategies.llm import LLMStrategy
from worker.agents.strategies.statistical import StatisticalStrategy

STRATEGY_CLASSES: dict[str, type[Strategy]] = {"statistical": StatisticalStrategy, "llm": LLMStrategy}

if tuple(STRATEGY_CLASSES) != STRATEGIES:  # one list of names: a strategy missing here is a bug
    raise ImportError(f"strategy registry {tuple(STRATEGY_CLASSES)} differs from names.STRATEGIES {STRATEGIES}")
