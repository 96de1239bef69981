"""LinearTextModel and TermModel: numpy-only inference on hand-written weights."""

import json
import math
from statistics import NormalDist

import numpy as np
import pytest

from worker.agents.models.artefact import ModelIntegrityError
from worker.agents.models.textmodel import LinearTextModel, TermModel, median_sentence, terms

# A tiny corpus of four tokenized facts, and a vocabulary with smoothed idf
# computed by hand: idf(t) = ln((1 + n) / (1 + df(t))) + 1 with n = 4.
CORPUS = [
    ["秘密", "窃取", "财物"],
    ["虚构", "事实", "骗取", "财物"],
    ["殴打", "轻伤"],
    ["秘密", "窃取", "手机"],
]
VOCAB = ["秘密", "窃取", "财物", "虚构", "骗取", "殴打", "轻伤", "秘密 窃取"]


def _idf(term: str) -> float:
    df = 0
    for doc in CORPUS:
        df += term in terms(doc, bigrams=True)
    return math.log(5 / (1 + df)) + 1


LABELS = ["盗窃罪", "诈骗罪", "故意伤害罪"]
#                 theft  fraud  injury
WEIGHTS = {
    "秘密": [2.0, -0.5, -0.5],
    "窃取": [3.0, -0.5, -0.5],
    "财物": [0.5, 0.5, -1.0],
    "虚构": [-0.5, 2.5, -0.5],
    "骗取": [-0.5, 3.0, -0.5],
    "殴打": [-0.5, -0.5, 3.0],
    "轻伤": [-0.5, -0.5, 2.0],
    "秘密 窃取": [1.0, -0.2, -0.2],
}


def _model(**overrides) -> LinearTextModel:
    kwargs = dict(
        kind="multilabel",
        vocab=VOCAB,
        idf=np.array([_idf(t) for t in VOCAB]),
        coef=np.array([WEIGHTS[t] for t in VOCAB]),
        intercept=np.array([-1.0, -1.0, -1.5]),
        labels=LABELS,
        calibration=np.array([[1.2, 0.1], [1.0, 0.0], [0.8, -0.2]]),
        config={"bigrams": True},
        metadata={"tokenizer": {"fingerprint": "test"}, "metrics": {"top1_accuracy": 1.0}},
    )
    kwargs.update(overrides)
    return LinearTextModel(**kwargs)


def _by_hand(tokens, model):
    """Sublinear TF-IDF, L2 norm, linear layer and Platt map written out longhand."""
    counts = {}
    for t in terms(tokens, bigrams=True):
        if t in VOCAB:
            counts[t] = counts.get(t, 0) + 1
    x = {t: (1 + math.log(c)) * _idf(t) for t, c in counts.items()}
    norm = math.sqrt(sum(v * v for v in x.values()))
    x = {t: v / norm for t, v in x.items()}
    probs = []
    for k in range(len(LABELS)):
        z = sum(v * WEIGHTS[t][k] for t, v in x.items()) + model.intercept[k]
        a, b = model.calibration[k]
        probs.append(1 / (1 + math.exp(-(a * z + b))))
    return probs


def test_it_computes_calibrated_probabilities_as_written_by_hand():
    model = _model()
    doc = ["被告人", "秘密", "窃取", "秘密", "窃取", "财物"]  # 被告人 is out of vocabulary
    assert model.predict_proba(doc) == pytest.approx(_by_hand(doc, model), abs=1e-12)
    idx, vals = model.vectorize(doc)
    assert [model.vocab[i] for i in idx] == ["秘密", "窃取", "财物", "秘密 窃取"]
    assert float(vals @ vals) == pytest.approx(1.0)


def test_it_ranks_labels_and_keeps_the_top_label_under_the_threshold():
    model = _model()
    top = model.top(["虚构", "事实", "骗取", "财物"], k=2)
    assert [label for label, _ in top] == ["诈骗罪", "盗窃罪"]
    assert top[0][1] > top[1][1]
    assert model.top(["虚构", "骗取"], k=5, min_p=0.5) == model.top(["虚构", "骗取"], k=1)
    # Nothing known: every probability is the calibrated intercept, all below 0.5,
    # yet the decision rule still names the most probable label.
    unknown = ["天气", "晴朗"]
    assert all(p < 0.5 for p in model.predict_proba(unknown))
    best = LABELS[int(np.argmax(model.predict_proba(unknown)))]
    assert [label for label, _ in model.predict_labels(unknown)] == [best]


def test_it_explains_a_label_by_the_terms_that_pushed_it_up():
    model = _model()
    doc = ["秘密", "窃取", "手机", "财物"]
    explained = model.explain(doc, "盗窃罪", n=2)
    assert [t for t, _ in explained] == ["窃取", "秘密"]
    assert all(c > 0 for _, c in explained)
    # Contributions are additive shares of the calibrated logit.
    idx, vals = model.vectorize(doc)
    full = model.explain(doc, "盗窃罪", n=100)
    negatives = sum(v * model.coef[i, 0] * 1.2 for i, v in zip(idx, vals) if model.coef[i, 0] < 0)
    logit = 1.2 * (vals @ model.coef[idx, 0] + model.intercept[0]) + 0.1
    assert sum(c for _, c in full) + negatives + 1.2 * model.intercept[0] + 0.1 == pytest.approx(logit)
    assert model.explain(["殴打"], "盗窃罪") == []  # nothing pushes theft up
    with pytest.raises(KeyError):
        model.explain(doc, "放火罪")


def test_it_saves_and_loads_identical_outputs(tmp_path):
    model = _model()
    model.save(tmp_path / "m")
    loaded = LinearTextModel.load(tmp_path / "m", expected_id=model.model_id)
    assert loaded.model_id == model.model_id
    assert loaded.weights_sha256 == model.weights_sha256
    assert loaded.labels == LABELS and loaded.metadata == model.metadata
    for doc in CORPUS + [["没有", "词"]]:
        assert np.array_equal(loaded.predict_proba(doc), model.predict_proba(doc))
        assert loaded.explain(doc, "诈骗罪") == model.explain(doc, "诈骗罪")
    manifest = json.loads((tmp_path / "m" / "model.json").read_text())
    assert manifest["model_id"] == model.model_id and manifest["vocab"] == VOCAB


def test_integer_labels_survive_a_round_trip(tmp_path):
    model = _model(labels=[264, 266, 234])
    model.save(tmp_path)
    loaded = LinearTextModel.load(tmp_path)
    assert loaded.labels == [264, 266, 234]
    assert loaded.top(["秘密", "窃取"], k=1)[0][0] == 264


def test_it_refuses_a_modified_weight(tmp_path):
    model = _model()
    model.save(tmp_path)
    coef = np.load(tmp_path / "coef.npy")
    coef[0, 0] += 1e-9
    np.save(tmp_path / "coef.npy", coef)
    with pytest.raises(ModelIntegrityError, match="weights"):
        LinearTextModel.load(tmp_path)


def test_it_refuses_modified_metrics(tmp_path):
    model = _model()
    model.save(tmp_path)
    manifest = json.loads((tmp_path / "model.json").read_text())
    manifest["metadata"]["metrics"]["top1_accuracy"] = 0.99
    (tmp_path / "model.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelIntegrityError, match="model_id"):
        LinearTextModel.load(tmp_path)


def test_it_refuses_an_unexpected_id_and_a_pickled_array(tmp_path):
    model = _model()
    model.save(tmp_path)
    with pytest.raises(ModelIntegrityError, match="expected"):
        LinearTextModel.load(tmp_path, expected_id="0" * 64)
    np.save(tmp_path / "idf.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ModelIntegrityError):
        LinearTextModel.load(tmp_path)


def _regression(**meta) -> LinearTextModel:
    return LinearTextModel(
        kind="regression",
        vocab=["盗窃", "抢劫", "数额巨大"],
        idf=np.ones(3),
        coef=np.array([[0.5], [2.0], [1.0]]),
        intercept=np.array([1.0]),
        config={"target_transform": "log1p"},
        metadata=meta,
    )


def test_regression_undoes_the_log_transform():
    model = _regression()
    # One known token: its L2-normalised value is 1.
    assert model.predict_value(["抢劫"]) == pytest.approx(math.expm1(3.0))
    assert model.predict_value(["未知"]) == pytest.approx(math.expm1(1.0))
    assert model.explain(["抢劫", "盗窃"])[0][0] == "抢劫"
    with pytest.raises(TypeError):
        model.predict_proba(["抢劫"])


def _one_label(label: str, weight: float) -> LinearTextModel:
    return LinearTextModel(
        kind="multilabel", vocab=["杀害", "致人死亡"], idf=np.ones(2), coef=np.array([[weight], [weight]]),
        intercept=np.array([-3.0]), labels=[label],
    )  # fmt: skip


def test_term_model_applies_the_cail_convention_and_round_trips(tmp_path):
    term = TermModel(months=_regression(), life=_one_label("life", 2.0), death=_one_label("death", 6.0))
    ordinary = term.predict(["抢劫"])
    assert ordinary["months"] == round(math.expm1(3.0)) and not ordinary["life"] and not ordinary["death"]
    grave = term.predict(["杀害", "致人死亡"])
    assert grave["death"] and not grave["life"] and grave["months"] == 0
    term.save(tmp_path)
    loaded = TermModel.load(tmp_path, expected_id=term.model_id)
    assert loaded.predict(["杀害"]) == term.predict(["杀害"])
    np.save(tmp_path / "death" / "intercept.npy", np.array([3.0]))
    with pytest.raises(ModelIntegrityError):
        TermModel.load(tmp_path)


def test_the_median_sentence_weighs_the_chance_of_life_and_death():
    assert median_sentence(36, 0.0, 0.0, 0.5) == ("fixed", pytest.approx(36))
    kind, months = median_sentence(36, 0.2, 0.0, 0.5)  # a fifth to life: the fixed term's 62.5th percentile
    assert kind == "fixed" and months == pytest.approx(math.expm1(math.log1p(36) + 0.5 * NormalDist().inv_cdf(0.625)))
    assert median_sentence(200, 0.3, 0.1, 1.0) == ("fixed", 300)  # no fixed term above 25 years
    assert median_sentence(120, 0.35, 0.2, 0.5)[0] == "life"  # 0.45 fixed, then life passes the middle
    assert median_sentence(120, 0.1, 0.6, 0.5)[0] == "death"
    assert median_sentence(120, 0.5, 0.0, 0.5)[0] == "life"
    assert median_sentence(120, 0.9, 0.9, 0.5)[0] == "life"  # scaled to half and half: life comes first


def test_a_term_model_with_a_spread_answers_the_median_sentence(tmp_path):
    parts = {"months": _regression(), "life": _one_label("life", 2.0), "death": _one_label("death", 0.0)}
    plain, spread = TermModel(**parts), TermModel(**parts, spread=0.5)
    assert spread.model_id != plain.model_id
    some = plain.predict(["抢劫", "杀害"])  # some chance of life imprisonment, below a half
    assert 0.1 < some["p_life"] + some["p_death"] < 0.5 and some["months"] == round(math.expm1(3.0))
    z = NormalDist().inv_cdf(0.5 / (1 - some["p_life"] - some["p_death"]))
    raised = spread.predict(["抢劫", "杀害"])
    assert raised["months"] == round(math.expm1(3.0 + 0.5 * z)) > some["months"] and not raised["life"]
    assert raised["months_estimate"] == some["months_estimate"]  # the fixed term's own estimate is unchanged
    grave = ["杀害", "致人死亡"]  # life just below a half, death unlikely: the threshold said a fixed term
    assert not plain.predict(grave)["life"] and spread.predict(grave)["life"]
    again = TermModel.load(spread.save(tmp_path / "term"), expected_id=spread.model_id)
    assert again.spread == 0.5 and again.predict(grave) == spread.predict(grave)


def test_it_rejects_inconsistent_arrays():
    with pytest.raises(ValueError):
        _model(coef=np.zeros((len(VOCAB), 2)))
    with pytest.raises(ValueError):
        _model(labels=["a", "a", "b"])
    with pytest.raises(ValueError):
        _model(intercept=np.array([np.nan, 0.0, 0.0]))
