"""The statistical strategy keeps the tokens and model rankings of the texts it focused on (a what-if
strategy is shared by the threads of a web process: apps/judging/services.py)."""

import threading

from worker.agents.strategies import statistical
from worker.agents.strategies.statistical import StatisticalStrategy


def test_a_strategy_keeps_the_views_of_the_most_recently_used_focused_texts():
    tokenized = []
    strategy = StatisticalStrategy(tokenize=lambda text: tokenized.append(text) or list(text))
    texts = [f"被告人甲{n}盗窃" for n in range(statistical.FOCUS_VIEWS + 2)]
    for text in texts:
        strategy._focus_view(text)
    strategy._focus_view(texts[2])  # used again: kept, and now the most recent
    strategy._focus_view(texts[-1])
    assert tokenized == texts, "a text seen again is not tokenised again"
    strategy._focus_view(texts[0])
    assert tokenized[-1] == texts[0], "the least recently used views were dropped"
    assert len(strategy._views) == statistical.FOCUS_VIEWS


def test_threads_sharing_a_strategy_each_get_the_view_of_their_own_text():
    strategy = StatisticalStrategy()
    texts = [f"被告人乙{n}诈骗他人财物" * (n + 1) for n in range(12)]
    wrong = []

    def work(text):
        for _ in range(200):
            if strategy._focus_view(text)["tokens"] != list(text):
                wrong.append(text)

    threads = [threading.Thread(target=work, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
