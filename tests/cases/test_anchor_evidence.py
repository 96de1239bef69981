"""The element check's anchor evidence read from the corpus: the articles the precedents cite, over all of them and
over those whose facts use a word (apps/corpus/search_service.py precedent_word_articles)."""

from collections import Counter

import pytest

from apps.corpus import search_service
from apps.corpus.models import Article, Precedent, SearchIndex

pytestmark = [pytest.mark.django_db]


def test_the_evidence_counts_the_precedents_of_the_active_index_and_the_articles_they_cite(judging_corpus, monkeypatch):
    assert search_service.precedent_word_articles(["盗窃"]) is None, "69 demo precedents are too few to say anything"
    monkeypatch.setattr(search_service, "MIN_PRECEDENTS_FOR_SHARES", 1)
    index = search_service.active_index(SearchIndex.Target.PRECEDENTS, SearchIndex.Method.BM25)
    tokens = search_service._tokenizer_for("").tokens
    facts = dict(Precedent.objects.values_list("pk", "fact"))
    cited = {pk: set(Article.objects.filter(outcomes__precedent_id=pk).values_list("pk", flat=True)) for pk in facts}
    evidence = search_service.precedent_word_articles(["盗窃", "醉酒", "不在任何判决里的词"])
    assert evidence.n == index.documents == len(facts)
    assert evidence.base == dict(Counter(a for pk in facts for a in cited[pk]))
    for word in ("盗窃", "醉酒"):
        using = [pk for pk, text in facts.items() if word in tokens(text)]
        assert using and evidence.used[word] == len(using)
        assert evidence.by_word[word] == dict(Counter(a for pk in using for a in cited[pk]))
    assert evidence.used["不在任何判决里的词"] == 0 and evidence.by_word["不在任何判决里的词"] == {}
    theft = Article.objects.get(key="264").pk
    assert evidence.lifts("盗窃", theft), "the precedents that tell of a theft cite 264 more often than the others do"
