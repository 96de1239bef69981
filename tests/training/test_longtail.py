"""The long-tail classifiers (training/longtail.py) and the development split (training/devsplit.py)."""

import json

import numpy as np
import pytest

from training.devsplit import dev_split_ids, main as devsplit_main
from training.longtail import article_documents, charge_documents, fit_longtail, legal_texts, statute_charges_of
from worker.agents.models.artefact import ModelIntegrityError
from worker.agents.models.textmodel import LinearTextModel, terms

STATUTES = [
    {"number": 264, "sub": 0, "key": "264", "label": "第二百六十四条", "text": "盗窃公私财物，数额较大的，处三年以下有期徒刑",
     "charges": ["盗窃罪"]},
    {"number": 263, "sub": 0, "key": "263", "label": "第二百六十三条", "text": "以暴力、胁迫方法抢劫公私财物的，处三年以上十年以下有期徒刑",
     "charges": ["抢劫罪"]},
    {"number": 347, "sub": 0, "key": "347", "label": "第三百四十七条", "text": "走私、贩卖、运输、制造毒品的，无论数量多少，都应当追究刑事责任",
     "charges": ["走私、贩卖、运输、制造毒品罪"]},
    {"number": 199, "sub": 0, "key": "199", "label": "第一百九十九条", "text": "（删去）", "charges": [], "repealed": True},
]
CHECKLISTS = [{"key": "263", "items": ["是否使用暴力、胁迫或者其他方法", "是否抢劫公私财物"]}]
INTERPRETATIONS = [{"id": "JI-1", "text": "入户抢劫，是指为实施抢劫行为而进入他人生活的与外界相对隔离的住所", "articles": [263]}]


def test_legal_texts_join_the_article_its_checklist_and_its_interpretations_and_skip_repealed_ones():
    texts = legal_texts(STATUTES, CHECKLISTS, INTERPRETATIONS)
    assert set(texts) == {"264", "263", "347"}
    assert "是否抢劫公私财物" in texts["263"] and "入户抢劫" in texts["263"] and "入户抢劫" not in texts["264"]


def test_a_dataset_charge_name_finds_the_statute_charge_it_stands_for():
    names = {c for s in STATUTES for c in s["charges"]}
    assert statute_charges_of("盗窃罪", names, {}) == ["盗窃罪"]
    assert statute_charges_of("贩卖毒品罪", names, {}) == ["走私、贩卖、运输、制造毒品罪"]
    assert statute_charges_of("窝藏赃物罪", names, {"窝藏赃物罪": "盗窃罪"}) == ["盗窃罪"]
    assert statute_charges_of("故意杀人罪", names, {}) == []
    texts = legal_texts(STATUTES)
    assert [label for label, _ in charge_documents(["贩卖毒品罪", "故意杀人罪"], STATUTES, texts, {})] == ["贩卖毒品罪"]
    assert [n for n, _ in article_documents([263, 999], STATUTES, texts)] == [263]


def _docs():
    theft = [list("被告人秘密窃取他人手机") + ["窃取"], list("趁无人盗走电动车一辆") + ["盗走"]] * 6
    robbery = [list("持刀威胁被害人抢走现金") + ["抢劫"]] * 6
    fraud = [list("虚构事实骗取他人钱款") + ["诈骗"]]  # one case only: the rare charge
    docs = theft + robbery + fraud
    labels = [{"盗窃罪"}] * len(theft) + [{"抢劫罪"}] * len(robbery) + [{"诈骗罪"}]
    return docs, labels


def test_the_legal_text_of_a_rare_charge_is_learned_from():
    docs, labels = _docs()
    extra = [(list("以非法占有为目的虚构事实隐瞒真相骗取公私财物") + ["诈骗", "骗取"], {"诈骗罪"})]
    query = list("被告人谎称投资项目骗取他人财物") + ["骗取"]
    without = fit_longtail(docs, labels, folds=2, min_df=1, char_ngrams=(1, 2), check_sample=5).model
    with_legal = fit_longtail(docs, labels, extra=extra, folds=2, min_df=1, char_ngrams=(1, 2), check_sample=5).model
    rank = lambda m: [str(label) for label, _ in m.top(query, k=3)]  # noqa: E731
    assert rank(with_legal)[0] == "诈骗罪"
    assert with_legal.predict_proba(query)[with_legal.labels.index("诈骗罪")] > without.predict_proba(query)[without.labels.index("诈骗罪")]


def test_fold_models_never_saw_their_fold_and_every_model_shares_the_vocabulary(tmp_path):
    docs, labels = _docs()
    fold_of = [i % 3 for i in range(len(docs))]
    fit = fit_longtail(docs, labels, folds=3, fold_of=fold_of, min_df=1, check_sample=5, metadata={"name": "t"})
    assert len(fit.folds) == 3 and list(fit.fold_of) == fold_of and fit.oof.shape == (len(docs), len(fit.model.labels))
    assert all(f.vocab == fit.model.vocab and f.metadata["fold"] == n for n, f in enumerate(fit.folds))
    # the out-of-fold score of a document is its fold model's score
    i = 4
    assert np.allclose(fit.folds[fold_of[i]].decision(docs[i]), fit.oof[i], atol=1e-4)
    # the character n-grams are part of the terms, and the float32 weights survive a round trip with their hashes
    assert fit.model.config["char_ngrams"] == [1, 3] and any(t.startswith("#") for t in fit.model.vocab)
    assert fit.model.coef.dtype == np.float32
    loaded = LinearTextModel.load(fit.model.save(tmp_path / "m"), expected_id=fit.model.model_id)
    assert np.allclose(loaded.decision(docs[0]), fit.model.decision(docs[0]))
    coef = np.load(tmp_path / "m" / "coef.npy")
    coef[0, 0] += 1.0
    np.save(tmp_path / "m" / "coef.npy", coef)
    with pytest.raises(ModelIntegrityError):
        LinearTextModel.load(tmp_path / "m")


def test_character_ngrams_are_prefixed_so_they_cannot_collide_with_tokens():
    assert terms(["盗窃", "手机"], False, (1, 2)) == ["盗窃", "手机", "#盗", "#窃", "#手", "#机", "#盗窃", "#窃手", "#手机"]
    assert terms(["盗窃"], False) == ["盗窃"]


def _corpus():
    cases = []
    for charge, n in (("盗窃罪", 40), ("诈骗罪", 9), ("赌博罪", 2), ("抢劫罪", 6)):
        cases += [{"id": f"{charge}-{i}", "charges": [charge], "label_source": "gold"} for i in range(n)]
    cases += [{"id": f"title-{i}", "charges": ["赌博罪"], "label_source": "title"} for i in range(9)]
    cases += [{"id": "mud-0", "charges": [], "per_defendant": [{"name": "甲", "charges": ["诈骗罪"]}], "label_source": "gold"}]
    return cases


def test_the_dev_split_takes_at_most_five_per_charge_and_a_third_of_a_charge():
    cases = _corpus()
    ids = dev_split_ids(cases)
    by_charge = {}
    for case in cases:
        if case["id"] in ids:
            by_charge.setdefault((case["charges"] or ["诈骗罪"])[0], []).append(case["id"])
    assert len(by_charge["盗窃罪"]) == 5  # capped at five
    assert len(by_charge["诈骗罪"]) == 3  # a third of its ten cases
    assert len(by_charge["抢劫罪"]) == 2  # a third of six
    assert len(by_charge["赌博罪"]) == 2  # a third of its eleven cases, but only two are verdicts
    assert not any(i.startswith("title-") for i in ids)  # a title is not a verdict
    assert dev_split_ids(list(reversed(cases))) == ids  # the file's order does not matter
    assert dev_split_ids(cases, seed=14) != ids


def test_the_dev_split_command_writes_the_records(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in _corpus()), encoding="utf-8")
    assert devsplit_main(["--cases", str(path), "--out", str(tmp_path / "dev.jsonl")]) == 0
    written = [json.loads(line)["id"] for line in (tmp_path / "dev.jsonl").read_text(encoding="utf-8").splitlines()]
    assert set(written) == dev_split_ids(_corpus())


def test_element_coverage_counts_own_and_other_articles():
    from training.element_coverage import coverage
    from worker.agents.stages.auditor.elements import ElementChecker

    checklists = {264: ["是否秘密窃取公私财物"], 263: ["是否以暴力、胁迫或者其他方法劫取公私财物"]}
    checker = ElementChecker.from_items([q for v in checklists.values() for q in v], tokenize=lambda t: [t])
    cases = [{"fact": "被告人在商场盗走手机一部。", "articles": [264]},
             {"fact": "被告人持刀抢走路人手机。", "articles": [263]}]
    result = coverage(cases, checklists, [263, 264], checker)
    assert (result["gold_articles"], result["gold_supported"]) == (2, 2)
    assert (result["other_articles"], result["other_supported"]) == (2, 0)
    assert "gold_without_element" not in result


def test_element_coverage_reads_the_training_cases_without_the_split_and_lists_articles_without_an_element(tmp_path, capsys):
    from training.element_coverage import main

    checklists = [{"article": 264, "sub": 0, "items": ["是否秘密窃取公私财物"]},
                  {"article": 263, "sub": 0, "items": ["是否以暴力、胁迫或者其他方法劫取公私财物"]}]
    cases = [{"id": "a", "fact": "被告人在商场盗走手机一部。", "articles": [264]},
             {"id": "b", "fact": "被告人在商场××手机一部。", "articles": [264]},  # masked: nothing shows theft
             {"id": "c", "fact": "被告人持刀抢走路人手机。", "articles": [263]},
             {"id": "d", "fact": "被告人在车站××钱包一个。", "articles": [264]}]

    def write(name, rows):
        (tmp_path / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        return tmp_path / name

    result = main(["--cases", str(write("cases.jsonl", cases)), "--exclude", str(write("split.jsonl", [cases[3]])),
                   "--checklists", str(write("checklists.jsonl", checklists)), "--missing", "5"])
    assert result["cases"] == 3, "the split's case is left out"
    assert (result["gold_articles"], result["gold_supported"]) == (3, 2)
    assert result["gold_without_element"] == [{"article": 264, "cases": 1, "of": 2, "examples": ["b"]}]
    assert json.loads(capsys.readouterr().out) == result
