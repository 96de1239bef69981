"""Fitting with scikit-learn, converting to numpy-only LinearTextModel, evaluating."""

import hashlib
import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

from training import statistical
from training.text_models import (
    MultilabelEvaluator,
    TermEvaluator,
    _fit_multilabel,
    _fit_regression,
    check_multilabel_equivalence,
    fit_binary,
    fit_multilabel,
    fit_regression,
    platt,
    reliability,
)
from worker.agents.models.textmodel import LinearTextModel, TermModel

KEYWORDS = {
    "盗窃罪": ["秘密", "窃取", "盗走"],
    "诈骗罪": ["虚构", "骗取", "冒充"],
    "故意伤害罪": ["殴打", "轻伤", "持刀"],
    "危险驾驶罪": ["醉酒", "驾驶", "酒精"],
}
FILLER = [f"词{i}" for i in range(300)]


def synthetic(n: int, seed: int, *, rare: bool = False):
    """Facts whose labels are decided by keywords, buried in random filler."""
    rng = random.Random(seed)
    docs, labels = [], []
    for i in range(n):
        chosen = {rng.choice(list(KEYWORDS))}
        if rng.random() < 0.25:
            chosen.add(rng.choice(list(KEYWORDS)))
        tokens = [rng.choice(FILLER) for _ in range(rng.randint(15, 40))]
        for label in chosen:
            tokens += rng.sample(KEYWORDS[label], 2)
        rng.shuffle(tokens)
        if rare and i == 0:
            chosen.add("罕见罪")
        docs.append(tokens)
        labels.append(chosen)
    return docs, labels


@pytest.fixture(scope="module")
def toy():
    train_docs, train_labels = synthetic(500, seed=1, rare=True)
    test_docs, test_labels = synthetic(200, seed=2)
    model, vectorizer, estimators = _fit_multilabel(train_docs, train_labels, bigrams=True, C=10.0)
    return model, vectorizer, estimators, test_docs, test_labels


def test_numpy_inference_equals_scikit_learn(toy):
    model, vectorizer, estimators, test_docs, _ = toy
    docs = test_docs + [["从未", "见过", "的词"], []]
    X = vectorizer.transform(docs)
    expected = np.column_stack([est.predict_proba(X)[:, 1] for est in estimators])
    assert np.abs(model.predict_proba_many(docs, calibrated=False) - expected).max() < 1e-6
    logits = np.column_stack([est.decision_function(X) for est in estimators])
    assert np.abs(model.decision_many(docs) - logits).max() < 1e-6
    # The check the training job runs on every fit agrees.
    assert check_multilabel_equivalence(model, vectorizer, estimators, docs) < 1e-6


def test_the_equivalence_check_catches_a_conversion_error(toy):
    model, vectorizer, estimators, test_docs, _ = toy
    broken = LinearTextModel(
        kind="multilabel", vocab=model.vocab, idf=model.idf, coef=model.coef * 1.001,
        intercept=model.intercept, labels=model.labels, config=model.config,
    )  # fmt: skip
    with pytest.raises(AssertionError, match="differs"):
        check_multilabel_equivalence(broken, vectorizer, estimators, test_docs[:20])


def test_a_learnable_task_reaches_high_accuracy(toy):
    model, _, _, test_docs, test_labels = toy
    metrics = MultilabelEvaluator(test_docs, test_labels, name="toy")(model)
    assert metrics["primary_metric"] == "exact_set_accuracy"
    assert metrics["top1_accuracy"] >= 0.97
    assert metrics["exact_set_accuracy"] >= 0.9
    assert metrics["micro_f1"] >= 0.95
    assert metrics["ece_top1"] < 0.1
    doc = ["词1", "醉酒", "驾驶", "词2"]
    assert model.top(doc, k=1)[0][0] == "危险驾驶罪"
    assert model.explain(doc, "危险驾驶罪", n=2)[0][0] in {"醉酒", "驾驶", "醉酒 驾驶", "词1 醉酒"}


def test_rare_labels_are_dropped_and_recorded(toy):
    model = toy[0]
    assert "罕见罪" not in model.labels
    assert model.metadata["dropped_labels"]["罕见罪"] == {"count": 1, "reason": "rare"}
    assert sorted(model.labels) == sorted(KEYWORDS)
    assert model.metadata["calibration"]["folds"] == 3


def test_it_saves_what_it_fitted(toy, tmp_path):
    model, _, _, test_docs, _ = toy
    model.save(tmp_path)
    loaded = LinearTextModel.load(tmp_path, expected_id=model.model_id)
    assert np.array_equal(loaded.predict_proba_many(test_docs[:30]), model.predict_proba_many(test_docs[:30]))


def test_regression_and_binary_models():
    docs, labels = synthetic(400, seed=3)
    months = [6.0 * len(s) + (30.0 if "故意伤害罪" in s else 0.0) for s in labels]
    model, vectorizer, ridge = _fit_regression(docs, months, alpha=0.3)
    X = vectorizer.transform(docs[:50])
    assert np.abs(model.decision_many(docs[:50])[:, 0] - ridge.predict(X)).max() < 1e-6
    test_docs, test_labels = synthetic(100, seed=4)
    gold = np.array([6.0 * len(s) + (30.0 if "故意伤害罪" in s else 0.0) for s in test_labels])
    pred = model.predict_values_many(test_docs)
    assert np.mean(np.abs(pred - gold)) < 0.5 * np.mean(np.abs(np.median(gold) - gold))

    grave = fit_binary(docs, ["故意伤害罪" in s for s in labels], label="death", calibration_folds=2)
    assert grave.labels == ["death"]
    p = grave.predict_proba_many(test_docs)[:, 0]
    y = np.array(["故意伤害罪" in s for s in test_labels])
    assert p[y].mean() > 0.8 > 0.2 > p[~y].mean()

    term = TermModel(
        months=fit_regression(docs, months),
        life=fit_binary(docs, ["盗窃罪" in s and "诈骗罪" in s for s in labels], label="life"),
        death=grave,
    )
    gold_terms = [{"months": int(m), "life": False, "death": False} for m in gold]
    metrics = TermEvaluator(test_docs, gold_terms)(term)
    assert metrics["primary_metric"] == "mae_months" and metrics["higher_is_better"] is False
    assert metrics["n"] == 100 and metrics["death"]["n_gold"] == 0


def test_fit_rejects_degenerate_input():
    with pytest.raises(ValueError):
        fit_multilabel([["a", "b"], ["a", "c"]], [{"x"}, {"x"}])
    with pytest.raises(ValueError):
        fit_binary([["a"], ["b"]], [True, True])


def test_platt_recovers_a_known_map():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 2, 20000)
    y = rng.random(20000) < 1 / (1 + np.exp(-(1.7 * z - 0.4)))
    slope, offset = platt(z, y)
    assert slope == pytest.approx(1.7, abs=0.1) and offset == pytest.approx(-0.4, abs=0.1)


def test_reliability_bins():
    ece, table = reliability(np.array([0.95, 0.95, 0.15, 0.15]), np.array([1, 1, 0, 1]))
    assert ece == pytest.approx(0.5 * 0.05 + 0.5 * 0.35)
    assert [row["n"] for row in table] == [2, 2]


# ---------------------------------------------------------------------- statistical job helpers
def test_labels_follow_the_corpus_conventions():
    multi = {
        "id": "m", "charges": ["开设赌场罪"], "articles": [25, 67, 303], "term": None,
        "defendants": ["甲", "乙"],
        "per_defendant": [{"charges": ["开设赌场罪"]}, {"charges": ["赌博罪", "开设赌场罪"]}],
    }  # fmt: skip
    single = {"id": "s", "charges": ["盗窃罪"], "articles": [264], "defendants": ["甲"],
              "term": {"months": 6, "life": False, "death": False}}  # fmt: skip
    assert statistical.charge_labels(multi) == {"开设赌场罪", "赌博罪"}
    assert statistical.article_labels(multi) == {303}
    assert statistical.term_label(multi) is None
    assert statistical.term_label(single) == {"months": 6, "life": False, "death": False}


def test_the_split_is_stable_and_seeded():
    ids = [f"case-{i}" for i in range(5000)]
    held = [statistical.is_heldout(i, 0.1, 13) for i in ids]
    assert 0.08 < sum(held) / len(ids) < 0.12
    assert held == [statistical.is_heldout(i, 0.1, 13) for i in ids]
    assert held != [statistical.is_heldout(i, 0.1, 14) for i in ids]


def test_it_refuses_to_train_on_an_evaluation_set(tmp_path):
    (tmp_path / "eval").mkdir()
    path = tmp_path / "eval" / "cases.jsonl"
    path.write_text("{}\n")
    with pytest.raises(SystemExit):
        statistical.load_cases(path)


# ---------------------------------------------------------------------- real corpus
SHARED = Path(os.environ.get("LEXTRACE_SHARED_DATA", "/work/shared/data"))
# Measured: held-out top-1 0.817 (exact-set 0.698) with these 3,000 training
# cases, 0.872 with all 11,839; about 45 s on one core, most of it jieba.
CHARGE_TOP1_FLOOR = 0.75


@pytest.mark.slow
def test_a_3000_case_charge_model_beats_the_floor(tmp_path):
    cases_path = SHARED / "cases.jsonl"
    if not cases_path.exists():
        pytest.skip(f"no corpus at {cases_path}")
    from lexlib.search.tokenize import Tokenizer

    seed, holdout = 13, 0.1
    cases = statistical.load_cases(cases_path)
    held = [c for c in cases if statistical.is_heldout(c["id"], holdout, seed)]
    train = sorted(
        (c for c in cases if not statistical.is_heldout(c["id"], holdout, seed)),
        key=lambda c: hashlib.sha256(c["id"].encode()).digest(),
    )[:3000]
    subset = train + held
    tokenizer = Tokenizer()
    tokens = tokenizer.tokens_many(c["fact"] for c in subset)
    results = statistical.train_all(
        subset, tokens, out=tmp_path, holdout=holdout, seed=seed, models=["charges"],
        base_metadata={
            "training_data": {"path": str(cases_path)},
            "tokenizer": {"fingerprint": tokenizer.fingerprint()},
        },
        log=lambda s: None,
    )  # fmt: skip
    metrics = results["charges"]["metrics"]
    assert results["charges"]["n_train"] <= 3000
    assert metrics["top1_accuracy"] > CHARGE_TOP1_FLOOR, metrics
    loaded = LinearTextModel.load(tmp_path / "charges", expected_id=results["charges"]["model_id"])
    assert loaded.metadata["metrics"]["top1_accuracy"] == metrics["top1_accuracy"]
    assert loaded.metadata["tokenizer"]["fingerprint"] == tokenizer.fingerprint()
    assert json.loads((tmp_path / "charges" / "model.json").read_text())["kind"] == "multilabel"
