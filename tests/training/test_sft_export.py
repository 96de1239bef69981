"""Fine-tuning export: the product's prompts, schema-valid answers, and the n-gram contamination filter."""

import json

from training import sft_export
from worker.agents.llm.schema import validate
from worker.agents.prompts import SCHEMAS

STATUTES = {"264": {"number": 264, "sub": 0, "text": "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。"}}
THEFT = {"id": "c1", "fact": "被告人张某于2018年3月翻墙进入被害人家中，窃取现金人民币五千元。", "defendants": ["张某"],
         "charges": ["盗窃罪"], "articles": [264], "term": {"months": 8, "life": False, "death": False}}


def test_normalise_drops_space_punctuation_and_masks():
    assert sft_export.normalise("被告人 张×某，于２０１８年。") == "被告人张某于2018年"


def test_a_shared_run_of_n_characters_is_contamination():
    index = sft_export.contamination_index(["甲乙丙丁戊己庚辛壬癸子丑"], 8)
    assert sft_export.is_contaminated("前缀，丙丁戊己庚辛壬癸！后缀", index, 8)
    assert not sft_export.is_contaminated("丙丁戊己庚辛壬X癸", index, 8)


def test_boilerplate_is_what_many_training_cases_share():
    index = sft_export.contamination_index(["本院认为被告人的行为已构成犯罪事实清楚", "独有的案情甲乙丙丁"], 8)
    training = ["本院认为被告人的行为已构成犯罪事实清楚A", "B本院认为被告人的行为已构成犯罪事实清楚", "本院认为被告人的行为已构成犯罪事实清楚C",
                "独有的案情甲乙丙丁"]
    common = sft_export.boilerplate(training, index, 8, max_cases=2)
    assert "本院认为被告人的" in common
    assert not any(g in common for g in sft_export.ngrams("独有的案情甲乙丙丁", 8))


def test_examples_end_with_a_schema_valid_answer_citing_the_evidence():
    examples = sft_export.examples(THEFT, STATUTES)
    assert [e["stage"] for e in examples] == ["predict_charges", "adjudicate"]
    for example in examples:
        answer = json.loads(example["messages"][-1]["content"])
        assert example["messages"][-1]["role"] == "assistant" and validate(answer, SCHEMAS[example["stage"]]) == []
    adjudication = json.loads(examples[1]["messages"][-1]["content"])
    assert adjudication["articles"] == ["264"] and "[1]" in adjudication["reasoning"] and "第二百六十四条" in adjudication["reasoning"]
    assert "盗窃公私财物" in examples[1]["messages"][1]["content"]  # the article text is the numbered evidence


def test_multi_defendant_cases_with_one_label_set_give_no_example():
    assert sft_export.examples(dict(THEFT, defendants=["张某", "李某"]), STATUTES) == []


def test_the_command_drops_contaminated_cases(tmp_path, capsys):
    cases, statutes, evalset, out = (tmp_path / n for n in ("cases.jsonl", "statutes.jsonl", "eval.jsonl", "out.jsonl"))
    other = dict(THEFT, id="c2", fact="被告人李某在商场内扒窃他人手机一部，价值人民币三千元，后被当场抓获归案。")
    cases.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in (THEFT, other)), encoding="utf-8")
    statutes.write_text(json.dumps(STATUTES["264"], ensure_ascii=False), encoding="utf-8")
    evalset.write_text(json.dumps({"id": "e1", "fact": "经审理查明：被告人李某在商场内扒窃他人手机一部，价值人民币三千元。"}, ensure_ascii=False),
                       encoding="utf-8")
    assert sft_export.main(["--cases", str(cases), "--statutes", str(statutes), "--exclude", str(evalset), "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert summary["cases_kept"] == 1 and summary["cases_dropped_contaminated"] == 1
    assert {json.loads(line)["case_id"] for line in out.read_text(encoding="utf-8").splitlines()} == {"c1"}
