"""The checklist-item verifier and the intent classifier: weak labels, calibrated fit, numpy inference, use."""

import json

import numpy as np
import pytest

from training.intent import general_part_intents, intent_examples, specific_part_intents
from training.text_models import fit_multilabel
from training.verifier import Structure, VerifierEvaluator, build_pairs, fit_verifier
from worker.agents.graph_types import ChecklistEntry
from worker.agents.models.artefact import ModelIntegrityError
from worker.agents.models.verifier import FEATURE_NAMES, ChecklistVerifier
from worker.agents.stages.researcher.retrieval import IntentClassifier, rerank_by_intent
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.types import ArticleAudit

SECTION = "第五章 侵犯财产罪"
STATUTES = [
    {"number": 263, "key": "263", "chapter": SECTION, "section": None, "charges": ["抢劫罪"], "text": "以暴力抢劫公私财物的，处三年以上十年以下有期徒刑。"},
    {"number": 264, "key": "264", "chapter": SECTION, "section": None, "charges": ["盗窃罪"], "text": "盗窃公私财物，数额较大的，处三年以下有期徒刑。"},
    {"number": 266, "key": "266", "chapter": SECTION, "section": None, "charges": ["诈骗罪"], "text": "诈骗公私财物，数额较大的，处三年以下有期徒刑。"},
    {"number": 280, "key": "280", "chapter": "第六章 妨害社会管理秩序罪", "section": "第一节 扰乱公共秩序罪", "charges": ["伪造公文罪"],
     "text": "伪造国家机关公文的，处三年以下有期徒刑。"},
    {"number": 98, "key": "98", "chapter": "第五章 其他规定", "section": None, "charges": [], "topic": "告诉才处理的含义",
     "text": "本法所称告诉才处理，是指被害人告诉才处理。"},
]
CHECKLISTS = [
    {"article": 263, "key": "263", "items": ["是否使用暴力劫取财物", "是否当场劫取"]},
    {"article": 264, "key": "264", "items": ["是否秘密窃取他人财物", "是否以非法占有为目的"]},
    {"article": 266, "key": "266", "items": ["是否虚构事实骗取财物", "被害人是否因受骗交付财物"]},
    {"article": 280, "key": "280", "items": ["是否伪造国家机关公文"]},
]
THEFT = "被告人趁被害人不备，秘密窃取他人财物，价值三千元，以非法占有为目的。"
FRAUD = "被告人虚构事实，谎称投资，骗取被害人财物，被害人因受骗交付财物二万元。"
ROBBERY = "被告人持刀使用暴力当场劫取被害人财物，抢走手机一部。"


def corpus(n: int = 60) -> list[dict]:
    kinds = [(THEFT, 264), (FRAUD, 266), (ROBBERY, 263)]
    return [{"id": f"c{i}", "fact": f"{i}年，" + kinds[i % 3][0], "articles": [kinds[i % 3][1]]} for i in range(n)]


def test_confusable_articles_are_uncited_neighbours_in_the_same_chapter_or_section():
    structure = Structure(STATUTES, CHECKLISTS)
    assert structure.confusable({"264"}) == ["263", "266"]  # nearest first; 280 is in another chapter
    assert structure.confusable({"263", "264"}) == ["266"]
    assert Structure(STATUTES, CHECKLISTS, neighbourhood=1).confusable({"264"}) == ["263"]


def test_pairs_label_cited_items_satisfied_and_confusable_ones_not():
    facts, pairs = build_pairs(corpus(3), Structure(STATUTES, CHECKLISTS))
    assert len(facts) == 3
    theft = [(key, q, ok) for i, key, q, ok in pairs if i == 0]
    assert ("264", "是否秘密窃取他人财物", True) in theft and ("266", "是否虚构事实骗取财物", False) in theft
    assert all(ok == (key == "264") for key, _, ok in theft) and not any(key == "280" for key, _, _ in theft)


@pytest.fixture(scope="module")
def verifier():
    facts, pairs = build_pairs(corpus(), Structure(STATUTES, CHECKLISTS))
    return fit_verifier(facts, pairs, folds=3)


def test_the_fitted_verifier_is_calibrated_numpy_and_ranks_the_right_items(verifier, tmp_path):
    assert verifier.intercept.shape == (3,) and verifier.coef.shape == (3, len(FEATURE_NAMES))  # 3 calibrated members
    [theft, fraud] = verifier.assess(THEFT, ["是否秘密窃取他人财物", "是否虚构事实骗取财物"])
    assert theft["p"] > 0.5 > fraud["p"] and theft["span"] == (0, len(THEFT))
    assert set(theft["features"]) == set(FEATURE_NAMES)
    loaded = ChecklistVerifier.load(verifier.save(tmp_path / "v"), expected_id=verifier.model_id)
    assert loaded.assess(THEFT, ["是否秘密窃取他人财物"])[0]["p"] == pytest.approx(theft["p"], abs=1e-12)
    manifest = json.loads((tmp_path / "v" / "verifier.json").read_text())
    manifest["threshold"] = 0.1
    (tmp_path / "v" / "verifier.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelIntegrityError):
        ChecklistVerifier.load(tmp_path / "v")


def test_the_evaluator_returns_held_out_metrics_with_the_lexical_rule_beside(verifier):
    held = [dict(c, id=f"h{c['id']}") for c in corpus(9)]
    facts, pairs = build_pairs(held, Structure(STATUTES, CHECKLISTS))
    m = VerifierEvaluator(facts, pairs)(verifier)
    assert m["primary_metric"] == "roc_auc" and m["higher_is_better"] and m["n"] == len(pairs)
    assert m["roc_auc"] > 0.9 and 0 <= m["brier"] < 0.25 and 0 <= m["ece"] <= 1
    assert set(m["lexical_rule"]) == {"accuracy", "satisfied_rate", "roc_auc_best_share"}


def test_the_statistical_strategy_thresholds_the_verifier_and_shows_its_score(verifier):
    items = [ChecklistEntry(pk=1, version_pk=1, order=0, question="是否秘密窃取他人财物"),
             ChecklistEntry(pk=2, version_pk=1, order=1, question="是否虚构事实骗取财物")]
    article = ArticleAudit(article_pk=1, key="264", label="第二百六十四条", charges=["盗窃罪"], version_pk=1, text="", in_force=True)
    strategy = StatisticalStrategy(verifier=verifier)
    yes, no = strategy.verify_items(THEFT, article, items)
    assert yes.satisfied and not no.satisfied and yes.span_text == THEFT and no.span is None
    # The element check decides the item (its terms in one sentence); the verifier's probability is shown beside it.
    assert yes.why["code"] == "item.terms_in_sentence" and yes.why["verifier_p"] == yes.score >= 0.5
    assert no.why["code"] == "item.not_shown" and no.why["verifier_p"] == no.score < 0.5
    assert strategy.versions()["verifier"] == verifier.model_id
    # Without a verifier: the lexical rule (fallback).
    fallback = StatisticalStrategy().verify_items(THEFT, article, items)
    assert "verifier_p" not in fallback[0].why and fallback[0].satisfied and StatisticalStrategy().versions()["verifier"] == "none"


def test_intent_weak_labels_follow_the_structure_of_the_law():
    assert general_part_intents(10, "第一章 刑法的任务、基本原则和适用范围", "", "") == {"procedure"}
    assert general_part_intents(3, "第一章 刑法的任务、基本原则和适用范围", "", "罪刑法定") == {"other"}
    assert general_part_intents(87, "第四章 刑罚的具体运用", "第八节 时效", "") == {"procedure"}
    assert general_part_intents(65, "第四章 刑罚的具体运用", "第二节 累犯", "") == {"consequence"}
    assert specific_part_intents("盗窃公私财物，数额较大的，处三年以下有期徒刑") == {"consequence"}
    assert specific_part_intents("本条所称国家工作人员，是指在国家机关中从事公务的人员。") == {"definition"}
    examples = intent_examples(STATUTES, corpus(6))
    assert ("art:98:0", "本法所称告诉才处理，是指被害人告诉才处理。", {"definition"}) in examples
    assert sum(labels == {"applicability"} for _, _, labels in examples) == 6


def test_the_trained_intent_classifier_drives_the_article_rerank():
    texts = ["盗窃公私财物数额较大的处三年以下有期徒刑", "诈骗财物的处三年以下有期徒刑并处罚金", "本法所称公共财产是指国有财产",
             "所称司法工作人员是指有侦查职责的人员", "被告人于某日窃取财物", "经审理查明被告人骗取财物", "对于告诉才处理的案件追诉期限",
             "犯罪的追诉时效期限"]
    labels = [{"consequence"}, {"consequence"}, {"definition"}, {"definition"}, {"applicability"}, {"applicability"},
              {"procedure"}, {"procedure"}]
    tokenize = list  # characters
    model = fit_multilabel([tokenize(t) for t in texts], labels, min_df=1, calibration_folds=0)
    classifier = IntentClassifier(model, tokenize)
    assert classifier.classify("被告人于某日窃取财物") == "applicability"
    assert "definition" in classifier.intents("所称财产是指国有财产")
    scored = {"a": 0.50, "b": 0.52}
    docs = {"a": "盗窃财物数额较大的处有期徒刑", "b": "追诉时效期限"}
    assert [d for d, _ in rerank_by_intent("被告人于某日窃取财物", scored, docs, classifier=classifier)] == ["a", "b"]
    assert np.isclose(dict(rerank_by_intent("被告人于某日窃取财物", scored, docs, classifier=classifier))["a"], 0.60)


def test_the_intent_sample_of_facts_falls_on_both_sides_of_the_split():
    from training.statistical import is_heldout

    cases = [{"id": f"case-{i}", "fact": "被告人于某日在某地窃取他人财物。被告人到案后如实供述。"} for i in range(400)]
    facts = [eid for eid, _, labels in intent_examples([], cases, max_fact_sentences=200) if labels == {"applicability"}]
    held = sum(is_heldout(eid, 0.1, 13) for eid in facts)
    assert len(facts) == 200 and 0 < held < 60
