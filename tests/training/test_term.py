"""The term model's adjustment (training/term.py): trees on the linear estimate and the sentencing facts,
stored with the term model, checked on load, and read only when a judgment gives the facts."""

import json

import numpy as np
import pytest

from training.term import FOLDS, contexts, fit_adjustment, legal_context
from training.text_models import fit_binary, fit_regression
from worker.agents.models.sentencing import SENTENCING_FEATURES, sentencing_features, statutory_range
from worker.agents.models.artefact import ModelIntegrityError
from worker.agents.models.textmodel import MANIFEST, TermAdjustment, TermModel

STATUTES = [{"number": 264, "sub": 0, "key": "264", "charges": ["盗窃罪"],
             "text": "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制；数额巨大的，处三年以上十年以下有期徒刑。"}]
INTERPRETATIONS = [{"articles": [264], "text": "第一条　盗窃公私财物价值一千元以上、三万元以上的，应当分别认定为刑法第二百六十四条"
                                              "规定的“数额较大”、“数额巨大”。"}]


def test_the_sentencing_facts_read_the_amount_against_the_charges_standards():
    ranges, standards = legal_context(STATUTES, INTERPRETATIONS, {})(["盗窃罪"])
    row = sentencing_features("被告人窃得现金5万元，案发后自首。", charges=1, ranges=ranges, standards=standards)
    assert set(row) == set(SENTENCING_FEATURES)
    assert row["amount_tier"] == 2 and row["range_max"] == 120 and row["has:自首"] == 1.0
    assert sentencing_features("被告人窃得现金500元。", charges=1, ranges=ranges, standards=standards)["amount_tier"] == 0
    assert sentencing_features("被告人窃得手机一部。", charges=1, ranges=[], standards={})["amount_tier"] == -1


@pytest.fixture(scope="module")
def cases():
    """Thefts whose term follows the amount's tier, which the words alone do not say."""
    rng = np.random.default_rng(3)
    out = []
    for n in range(400):
        yuan = float(rng.choice([800, 2000, 8000, 40000, 90000]))
        months = 6 if yuan < 1000 else 10 if yuan < 30000 else 48
        facts = f"被告人某{n}在商场窃得财物，价值人民币{int(yuan)}元。"
        out.append((facts, months * float(rng.uniform(0.9, 1.1))))
    return out


def test_the_adjustment_learns_what_the_words_miss_and_travels_with_the_model(cases, tmp_path):
    tokens = [list(facts) + ["@罪名:盗窃罪"] for facts, _ in cases]
    months = [m for _, m in cases]
    context = contexts([f for f, _ in cases], [["盗窃罪"]] * len(cases), legal_context(STATUTES, INTERPRETATIONS, {}))
    fit = fit_adjustment(tokens, months, context, [n % FOLDS for n in range(len(cases))], alpha=1.0, seed=13,
                         feature_args={"min_df": 1, "max_features": None, "bigrams": False})
    assert fit.trees is not None and fit.mae_adjusted < fit.mae_linear  # out of fold, the trees beat the words alone
    assert 0 < fit.spread < 2  # the adjusted estimate's error in log1p months, out of fold
    adjust = fit.trees
    linear = fit_regression(tokens, months, alpha=1.0, target_transform="log1p", min_df=1)
    flags = [bool(n % 2) for n in range(len(cases))]
    life, death = (fit_binary(tokens, flags, label=key, min_df=1) for key in ("life", "death"))
    plain = TermModel(months=linear, life=life, death=death)
    model = TermModel(months=linear, life=life, death=death, adjust=TermAdjustment(features=SENTENCING_FEATURES, trees=adjust))
    assert model.model_id != plain.model_id
    errors = {"linear": [], "adjusted": []}
    for t, c, m in zip(tokens, context, months):
        errors["linear"].append(abs(model.predict(t)["months_estimate"] - m))
        errors["adjusted"].append(abs(model.predict(t, c)["months_estimate"] - m))
    assert np.mean(errors["adjusted"]) < 0.7 * np.mean(errors["linear"]), {k: np.mean(v) for k, v in errors.items()}
    # stored and loaded with its id; a changed tree is refused
    again = TermModel.load(model.save(tmp_path / "term"), expected_id=model.model_id)
    assert again.predict(tokens[0], context[0]) == model.predict(tokens[0], context[0])
    values = np.load(tmp_path / "term" / "adjust" / "tree_value.npy")
    np.save(tmp_path / "term" / "adjust" / "tree_value.npy", values * 2)
    with pytest.raises(ModelIntegrityError):
        TermModel.load(tmp_path / "term")
    assert "adjust" in json.loads((tmp_path / "term" / MANIFEST).read_text())["parts"]


def test_a_term_model_without_adjustment_keeps_its_id(tmp_path, cases):
    tokens = [list(facts) for facts, _ in cases[:60]]
    months = [m for _, m in cases[:60]]
    flags = [bool(n % 2) for n in range(60)]
    model = TermModel(months=fit_regression(tokens, months, min_df=1), life=fit_binary(tokens, flags, label="life", min_df=1),
                      death=fit_binary(tokens, flags, label="death", min_df=1))
    again = TermModel.load(model.save(tmp_path / "plain"), expected_id=model.model_id)
    assert again.adjust is None and again.predict(tokens[0], {"amount_tier": 2.0}) == model.predict(tokens[0])
    assert statutory_range(STATUTES[0]["text"]).max_months == 120


def test_trees_that_do_not_beat_the_linear_estimate_out_of_fold_are_not_kept():
    # The words say it all (robbery 60 months, else 6) and the sentencing facts are noise: on 60 cases, leaves of
    # many cases only blur the linear estimate, so the term model keeps the linear one, with its own spread.
    rng = np.random.default_rng(5)
    words = [["抢劫"] if n % 2 else ["盗窃"] for n in range(60)]
    months = [60.0 if w == ["抢劫"] else 6.0 for w in words]
    context = [{f: float(rng.normal()) for f in SENTENCING_FEATURES} for _ in words]
    fit = fit_adjustment(words, months, context, [n % FOLDS for n in range(60)], alpha=0.01, seed=13,
                         feature_args={"min_df": 1, "max_features": None, "bigrams": False})
    assert fit.trees is None and fit.mae_adjusted >= fit.mae_linear, fit
    assert fit.spread >= 0


def test_charge_balance_weighs_a_case_by_its_rarest_charge():
    from training.term import charge_balance
    charges = [["盗窃罪"]] * 8 + [["抢劫罪"]] * 2 + [["盗窃罪", "抢劫罪"]]
    w = charge_balance(charges, 0.5)
    assert np.isclose(w.mean(), 1.0)
    assert w[-1] == w[8] > w[0]  # a theft and a robbery: its rarest charge, the robbery
    assert np.isclose(w[8] / w[0], (9 / 3) ** 0.5)
    assert np.allclose(charge_balance(charges, 0.0), 1.0)


def test_weights_bring_a_rare_charges_terms_nearer_to_its_own():
    """Three hundred thefts of six months and ten robberies of five years, told in the same words: fitted to every case
    alike, the robberies' estimate shrinks towards the thefts' far more than with the cases weighed by charge."""
    from training.term import charge_balance
    rng = np.random.default_rng(5)
    words = ["被告人", "某日", "在", "街道", "财物", "价值", "人民币", "被抓获", "到案后", "如实供述"]
    charges = [["盗窃罪"]] * 300 + [["抢劫罪"]] * 10
    tokens = [list(rng.choice(words, size=6)) + [f"@罪名:{c[0]}"] for c in charges]
    months = [6.0] * 300 + [60.0] * 10
    robbery = [t for t, c in zip(tokens, charges) if c == ["抢劫罪"]]
    error = {}
    for power in (0.0, 0.5):
        model = fit_regression(tokens, months, alpha=1.0, min_df=1, sample_weight=charge_balance(charges, power))
        error[power] = float(np.mean([abs(v - 60.0) for v in model.predict_values_many(robbery)]))
    assert error[0.5] < 0.8 * error[0.0], error
