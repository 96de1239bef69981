import json
import os
import random
import re
from pathlib import Path

import pytest

from worker.agents.stages.features import CaseFeatures, FeatureLexicon, extract_features
from worker.agents.stages.focus import focus_facts

SHARED = Path(os.environ.get("LEXTRACE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def test_it_finds_features_in_every_dimension():
    fact = ("被告人张某系累犯，于某日夜间翻墙进入被害人李某家中，窃取现金人民币一万二千元及苹果手机一部。"
            "案发后张某主动到派出所投案，如实供述，退赔全部损失并取得被害人谅解。")
    f = extract_features(fact)
    assert "累犯" in f.defendant
    assert {"秘密窃取", "入户"} <= set(f.behaviour)
    assert {"财物为手机", "金额:千元至三万元"} <= set(f.victim)
    assert {"自首", "如实供述", "取得谅解", "赔偿"} <= set(f.mental)


@pytest.mark.parametrize(
    "text, bucket",
    [("盗得人民币800元", "金额:千元以下"), ("价值人民币3723元", "金额:千元至三万元"),
     ("骗取人民币5.6万元", "金额:三万至三十万元"), ("共计人民币一百二十万元", "金额:三十万元以上")],
)
def test_amounts_are_bucketed_never_kept_exact(text, bucket):
    assert bucket in extract_features(text).victim


def test_blood_alcohol_and_drug_weights_are_bucketed():
    assert "醉酒:80至200mg" in extract_features("经鉴定，其血液中乙醇含量为180mg/100ml").behaviour
    assert "毒品:十克以下" in extract_features("从其身上查获甲基苯丙胺0.5克").behaviour


def test_the_ontology_text_joins_the_four_dimensions_in_order():
    text = CaseFeatures(defendant=("累犯",), behaviour=("秘密窃取",)).text()
    assert text == "被告人特征：累犯；行为：秘密窃取；对象：无；主观与悔罪：无"


def test_focus_keeps_this_defendants_and_shared_sentences():
    fact = "二被告人事先商量。王某负责望风。赵某进入室内窃取财物。赵某另骗取他人钱款。"
    focused = focus_facts(fact, "王某", ["王某", "赵某"])
    assert focused == "二被告人事先商量。王某负责望风。"
    assert focus_facts(fact, "赵某", ["王某", "赵某"]) == "二被告人事先商量。赵某进入室内窃取财物。赵某另骗取他人钱款。"
    assert focus_facts(fact, "张某", ["张某"]) == fact


def test_a_defendant_named_only_as_the_source_of_what_another_received_is_not_told_that_act():
    # found in `make demo` on the corpus: the thief 孙某 was judged 掩饰、隐瞒犯罪所得罪 by the receiver's sentence
    fact = ("被告人孙某多次入户盗窃，窃得首饰价值人民币2万元。被告人周某明知系孙某盗窃所得，仍以5000元价格收购上述首饰。"
            "案发后孙某主动投案。")
    assert focus_facts(fact, "孙某", ["孙某", "周某"]) == "被告人孙某多次入户盗窃，窃得首饰价值人民币2万元。案发后孙某主动投案。"
    assert focus_facts(fact, "周某", ["孙某", "周某"]) == "被告人周某明知系孙某盗窃所得，仍以5000元价格收购上述首饰。"
    # named as a party of the act, or as a defendant himself, he keeps the sentence
    for kept in ("被告人周某与孙某共同盗窃所得首饰一批。", "被告人周某向被告人孙某收购盗窃所得首饰。"):
        assert kept in focus_facts(kept, "孙某", ["孙某", "周某"])


def test_the_lexicon_round_trips_through_json(tmp_path):
    lexicon = FeatureLexicon.default()
    lexicon.to_json(tmp_path / "lex.json")
    again = FeatureLexicon.from_json(tmp_path / "lex.json")
    assert again.version == lexicon.version
    assert extract_features("入户盗窃", lexicon=again) == extract_features("入户盗窃")


@pytest.mark.slow
def test_on_real_cases_features_are_abstract_and_cover_behaviour():
    path = SHARED / "cases.jsonl"
    if not path.is_file():
        pytest.skip("shared corpus not available")
    cases = [json.loads(line) for line in path.open(encoding="utf-8")]
    sample = random.Random(13).sample(cases, 2000)
    with_behaviour, totals = 0, []
    for case in sample:
        f = extract_features(case["fact"])
        labels = [label for _, label in f.labels()]
        for label in labels:
            if ":" not in label:  # buckets ("金额:千元至三万元", "醉酒:80至200mg") are fixed labels
                assert not re.search(r"\d", label), label
            assert not any(name and name in label for name in case["defendants"])
        with_behaviour += bool(f.behaviour)
        totals.append(len(labels))
    assert with_behaviour / len(sample) >= 0.95
    assert sorted(totals)[len(totals) // 2] >= 4
