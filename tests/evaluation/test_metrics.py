"""Evaluation metrics: hand-computed examples of the LegalGraphRAG protocol (no database)."""

import json

import pytest

from apps.evaluation.metrics import (
    COMPARE_KEYS,
    ROW_COLUMNS,
    TERM_DEATH_MONTHS,
    TERM_LIFE_MONTHS,
    Entry,
    article_number,
    compare,
    entry_scores,
    evaluate,
    is_subsequence,
    map_predicted,
    metrics_rows,
    normalize_charge,
    term_months,
)


def entry(**kwargs) -> Entry:
    """An entry with empty gold/predictions unless given."""
    base: dict = {
        "id": "x",
        "gold_charges": [],
        "gold_articles": [],
        "gold_term": None,
        "pred_charges": [],
        "pred_articles": [],
        "pred_term": None,
    }
    return Entry(**{**base, **kwargs})


# --- charges -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(" 盗窃 ", "盗窃罪"), ("盗窃罪", "盗窃罪"), ("故意 伤害", "故意伤害罪"), ("无罪", "无罪"), ("", ""), ("  ", "")],
)
def test_normalize_charge(raw, expected):
    assert normalize_charge(raw) == expected


def test_is_subsequence():
    assert is_subsequence("贩卖毒品罪", "走私、贩卖、运输、制造毒品罪")
    assert is_subsequence("", "盗窃罪")
    assert not is_subsequence("故意伤害罪", "故意杀人罪")
    # Order matters: the characters are all present but 品 comes before 毒.
    assert not is_subsequence("毒品罪", "品毒罪")


def test_subsequence_maps_a_combined_charge_name_onto_the_gold_one():
    assert map_predicted(["走私、贩卖、运输、制造毒品"], ["贩卖毒品罪"]) == {"贩卖毒品罪"}


def test_subsequence_mapping_does_not_map_a_different_charge():
    assert map_predicted(["故意杀人罪"], ["故意伤害罪"]) == {"故意杀人罪"}


def test_a_predicted_name_maps_onto_at_most_one_gold_charge():
    # Both gold names are subsequences; the first in gold order is taken.
    mapped = map_predicted(["走私、贩卖、运输、制造毒品罪"], ["贩卖毒品罪", "运输毒品罪"])
    assert mapped == {"贩卖毒品罪"}


def test_exact_match_wins_over_subsequence_and_blank_predictions_are_dropped():
    assert map_predicted(["盗窃", " ", "诈骗罪"], ["诈骗罪", "盗窃罪"]) == {"盗窃罪", "诈骗罪"}


def test_partial_overlap_is_not_exact_but_gives_partial_counts():
    s = entry_scores(entry(gold_charges=["盗窃", "诈骗罪"], pred_charges=["盗窃罪", "抢劫罪"]))
    assert (s["charges_exact"], s["charges_tp"], s["charges_fp"], s["charges_fn"]) == (False, 1, 1, 1)
    # micro-F1 of this entry alone: 2*1 / (2*1 + 1 + 1) = 0.5
    assert evaluate([entry(gold_charges=["盗窃", "诈骗罪"], pred_charges=["盗窃罪", "抢劫罪"])])["charges"][
        "micro_f1"
    ] == pytest.approx(0.5)


def test_acquittal_is_a_false_positive_while_an_empty_prediction_is_only_a_miss():
    acquitted = entry_scores(entry(gold_charges=["盗窃罪"], pred_charges=["无罪"]))
    assert (acquitted["charges_exact"], acquitted["charges_fp"], acquitted["charges_fn"]) == (False, 1, 1)
    empty = entry_scores(entry(gold_charges=["盗窃罪"], pred_charges=[]))
    assert (empty["charges_exact"], empty["charges_fp"], empty["charges_fn"]) == (False, 0, 1)


# --- articles ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (264, 264),
        ("264", 264),
        (" 264 ", 264),
        ("133-1", 133),
        ("第一百三十三条之一", 133),
        ("第二百六十四条", 264),
        ("第十条", 10),
        ("第一百零二条", 102),
        ("第266条", 266),
        ("二百六十四", 264),
        ("２６４", 264),
    ],
)
def test_article_number_reads_every_accepted_form(value, expected):
    assert article_number(value) == expected


@pytest.mark.parametrize("value", ["", "abc", "第十十条", "第二百六十四款", "133-", 0, -3, True, None, 264.0])
def test_article_number_refuses_junk(value):
    assert article_number(value) is None


def test_sub_articles_compare_by_base_number():
    s = entry_scores(entry(gold_articles=["133-1"], pred_articles=["第一百三十三条之一", "第二百六十四条"]))
    assert s["articles_gold"] == [133]
    assert s["articles_pred"] == [133, 264]
    assert (s["articles_exact"], s["articles_tp"], s["articles_fp"], s["articles_fn"]) == (False, 1, 1, 0)


def test_entries_without_gold_articles_are_not_article_scored():
    s = entry_scores(entry(gold_charges=["危险驾驶罪"], pred_charges=["危险驾驶罪"], pred_articles=[133]))
    assert s["articles_exact"] is None
    assert s["articles_fp"] == 0
    assert s["traceable"] is None and s["untraceable"] is None


# --- term --------------------------------------------------------------------


def test_term_months_conventions():
    assert (TERM_LIFE_MONTHS, TERM_DEATH_MONTHS) == (300, 360)
    assert term_months(None) == 0
    assert term_months({"months": 36, "life": False, "death": False}) == 36
    assert term_months({"months": 0, "life": True, "death": False}) == 300
    assert term_months({"months": 0, "life": True, "death": True}) == 360


def test_missing_term_prediction_counts_as_zero_months_and_wrong():
    s = entry_scores(entry(gold_term={"months": 18}, pred_term=None))
    assert (s["term_exact"], s["term_abs_error"]) == (False, 18)
    # Even against a gold of 0 months the missing prediction is not an exact hit.
    s = entry_scores(entry(gold_term={"months": 0}, pred_term=None))
    assert (s["term_exact"], s["term_abs_error"]) == (False, 0)


def test_life_and_death_are_categories_for_exact_match():
    same_life = entry_scores(entry(gold_term={"life": True, "months": 0}, pred_term={"life": True, "months": 99}))
    assert (same_life["term_exact"], same_life["term_abs_error"]) == (True, 0)
    # 360 fixed months equals the death convention for MAE but is a different category.
    death_vs_fixed = entry_scores(entry(gold_term={"death": True}, pred_term={"months": 360}))
    assert (death_vs_fixed["term_exact"], death_vs_fixed["term_abs_error"]) == (False, 0)


def test_entries_without_gold_term_are_not_term_scored():
    s = entry_scores(entry(gold_term=None, pred_term={"months": 12}))
    assert s["term_exact"] is None and s["term_abs_error"] is None
    assert evaluate([entry(gold_term=None, pred_term={"months": 12})])["term"] == {"n": 0, "exact": None, "mae": None}


# --- a whole run, hand-computed ----------------------------------------------

CATEGORIES = {
    "盗窃": ["盗窃"],
    "诈骗": ["诈骗罪", "合同诈骗罪"],
    "毒品": ["贩卖毒品罪"],
    "强奸": ["强奸罪"],
}


def run_entries() -> list[Entry]:
    return [
        # E1: all right; charge written without 罪; article in Chinese form; fully verified.
        entry(
            id="e1", gold_charges=["盗窃罪"], pred_charges=["盗窃"],
            gold_articles=[264], pred_articles=["第二百六十四条"],
            gold_term={"months": 36}, pred_term={"months": 36},
            candidate_articles=[264, 67, 52], verified_articles=[264],
            llm_calls=4, prompt_tokens=1000, completion_tokens=200, seconds=10.0,
        ),
        # E2: partial charges (TP1 FP1 FN1), partial articles (TP1 FN1), term off by 6; two defendants.
        entry(
            id="e2", gold_charges=["盗窃罪", "诈骗罪"], pred_charges=["盗窃罪", "抢劫罪"],
            gold_articles=["264", "266"], pred_articles=["264"],
            gold_term={"months": 24}, pred_term={"months": 30},
            candidate_articles=[264, 263], verified_articles=[264],
            defendants=2, llm_calls=6, prompt_tokens=3000, completion_tokens=600, seconds=30.0,
        ),
        # E3: charge right via subsequence; extra article 357; life vs death (|360-300| = 60); 347 unverified.
        entry(
            id="e3", gold_charges=["贩卖毒品罪"], pred_charges=["走私、贩卖、运输、制造毒品罪"],
            gold_articles=["第三百四十七条"], pred_articles=[347, 357],
            gold_term={"life": True}, pred_term={"death": True},
            candidate_articles=[347, 348], verified_articles=[],
            llm_calls=2, prompt_tokens=500, completion_tokens=100, seconds=5.0,
        ),
        # E4: failed entry: empty predictions, counted as wrong everywhere.
        entry(
            id="e4", status="model_unavailable", gold_charges=["故意伤害罪"], gold_articles=[234],
            gold_term={"months": 12},
        ),
        # E5: right charges; no gold articles and no gold term, so only charge-scored.
        entry(
            id="e5", gold_charges=["危险驾驶罪"], pred_charges=["危险驾驶罪"],
            llm_calls=5, prompt_tokens=2000, completion_tokens=400, seconds=20.0,
        ),
    ]  # fmt: skip


@pytest.fixture
def result() -> dict:
    return evaluate(run_entries(), CATEGORIES)


def test_run_charge_metrics(result):
    # exact: e1, e3, e5 -> 3/5.  TP = 1+1+1+0+1 = 4, FP = 1 (抢劫罪), FN = 1 (诈骗罪) + 1 (e4) = 2.
    # micro-F1 = 2*4 / (2*4 + 1 + 2) = 8/11; precision 4/5; recall 4/6.
    charges = result["charges"]
    assert result["n"] == 5
    assert charges["accuracy"] == pytest.approx(0.6)
    assert charges["micro_f1"] == pytest.approx(8 / 11)
    assert charges["precision"] == pytest.approx(0.8)
    assert charges["recall"] == pytest.approx(2 / 3)


def test_run_article_metrics(result):
    # Scored: e1..e4 (e5 has no gold articles).  exact: e1 -> 1/4.
    # TP = 1+1+1+0 = 3, FP = 1 (357), FN = 1 (266) + 1 (234) = 2 -> F1 = 6/9.
    articles = result["articles"]
    assert articles["n"] == 4
    assert articles["accuracy"] == pytest.approx(0.25)
    assert articles["micro_f1"] == pytest.approx(2 / 3)
    assert articles["precision"] == pytest.approx(0.75)
    assert articles["recall"] == pytest.approx(0.6)


def test_run_term_metrics(result):
    # Scored e1..e4; exact only e1; MAE = (0 + 6 + 60 + 12) / 4 = 19.5 (e4's missing term = 0 months).
    assert result["term"] == {"n": 4, "exact": pytest.approx(0.25), "mae": pytest.approx(19.5)}


def test_traceable_and_untraceable(result):
    # e1: charges right, 264 verified -> traceable.  e3: charges right, 347 not verified -> untraceable.
    assert result["traceable_n"] == 4
    assert result["traceable_correct"] == pytest.approx(0.25)
    assert result["untraceable_correct"] == pytest.approx(0.25)
    scores = {e.id: entry_scores(e) for e in run_entries()}
    assert (scores["e1"]["traceable"], scores["e1"]["untraceable"]) == (True, False)
    assert (scores["e3"]["traceable"], scores["e3"]["untraceable"]) == (False, True)
    assert (scores["e2"]["traceable"], scores["e2"]["untraceable"]) == (False, False)


def test_retrieval_recall_and_error_rate(result):
    # Gold articles in e1..e4: 1+2+1+1 = 5.  Candidate hits 264, 264, 347 -> 3/5; verified hits 264, 264 -> 2/5.
    # Candidates 3+2+2+0 = 7, of which not gold: 67, 52, 263, 348 -> 4/7.
    retrieval = result["retrieval"]
    assert retrieval["n"] == 4
    assert retrieval["recall_candidates"] == pytest.approx(0.6)
    assert retrieval["recall_verified"] == pytest.approx(0.4)
    assert retrieval["error_rate"] == pytest.approx(4 / 7)


def test_cost_is_per_defendant(result):
    # llm_calls per defendant: 4, 6/2=3, 2, 0, 5 -> mean 2.8, median 3.
    # tokens per defendant: 1200, 3600/2=1800, 600, 0, 2400 -> mean 1200, median 1200.
    cost = result["cost"]
    assert cost["defendants"] == 6
    assert cost["llm_calls"] == {"mean": pytest.approx(2.8), "median": 3}
    assert cost["tokens"] == {"mean": pytest.approx(1200), "median": 1200}
    assert cost["prompt_tokens"]["mean"] == pytest.approx(1000)
    assert cost["completion_tokens"]["median"] == 200
    assert cost["seconds"] == {"mean": pytest.approx(10.0), "median": 10.0}


def test_status_counts_keep_the_failed_entry(result):
    assert result["status"] == {"judged": 4, "model_unavailable": 1}


def test_failed_entry_counts_as_wrong_not_excluded():
    ok = entry(id="ok", gold_charges=["盗窃罪"], pred_charges=["盗窃罪"], gold_articles=[264], pred_articles=[264])
    failed = entry(id="bad", status="no_evidence", gold_charges=["盗窃罪"], gold_articles=[264])
    r = evaluate([ok, failed])
    assert r["n"] == 2
    assert r["charges"]["accuracy"] == pytest.approx(0.5)
    assert r["articles"]["accuracy"] == pytest.approx(0.5)
    # TP 1, FN 1 -> F1 = 2/3
    assert r["charges"]["micro_f1"] == pytest.approx(2 / 3)
    assert r["status"] == {"judged": 1, "no_evidence": 1}


def test_categories_membership_and_metrics(result):
    cats = result["categories"]
    # e2 (盗窃罪 + 诈骗罪) belongs to both 盗窃 and 诈骗.
    assert cats["盗窃"]["n"] == 2 and cats["诈骗"]["n"] == 1
    # 盗窃: e1 exact, e2 not -> 0.5; TP 2, FP 1, FN 1 -> F1 4/6; articles e1 exact, e2 not -> 0.5.
    assert cats["盗窃"] == {
        "n": 2, "charge_accuracy": 0.5, "charge_micro_f1": pytest.approx(2 / 3), "article_n": 2, "article_accuracy": 0.5
    }  # fmt: skip
    # 诈骗: only e2 -> accuracy 0, F1 2/(2+1+1) = 0.5.
    assert cats["诈骗"]["charge_accuracy"] == 0.0
    assert cats["诈骗"]["charge_micro_f1"] == pytest.approx(0.5)
    # 毒品: e3, mapped via subsequence -> charge right, articles wrong.
    assert (cats["毒品"]["n"], cats["毒品"]["charge_accuracy"], cats["毒品"]["article_accuracy"]) == (1, 1.0, 0.0)
    assert cats["强奸"] == {
        "n": 0, "charge_accuracy": None, "charge_micro_f1": None, "article_n": 0, "article_accuracy": None
    }  # fmt: skip


def test_result_is_json_serialisable(result):
    assert json.loads(json.dumps(result, ensure_ascii=False))["charges"]["accuracy"] == pytest.approx(0.6)


def test_empty_run_does_not_crash():
    r = evaluate([], {"盗窃": ["盗窃罪"]})
    assert r["n"] == 0
    assert r["charges"]["accuracy"] is None and r["charges"]["tp"] == 0
    assert r["term"] == {"n": 0, "exact": None, "mae": None}
    assert r["cost"]["llm_calls"] == {"mean": None, "median": None}
    assert r["status"] == {}
    assert r["categories"]["盗窃"]["n"] == 0
    rows = metrics_rows(r, "empty")
    assert rows[0]["n"] == 0 and rows[0]["charge_acc"] == ""
    json.dumps(r)


# --- presentation ------------------------------------------------------------


def test_metrics_rows_shape(result):
    rows = metrics_rows(result, "run-a")
    assert [row["scope"] for row in rows] == ["overall", "盗窃", "诈骗", "毒品", "强奸"]
    assert all(list(row) == list(ROW_COLUMNS) for row in rows)
    overall = rows[0]
    assert (overall["run"], overall["n"]) == ("run-a", 5)
    assert overall["charge_acc"] == pytest.approx(0.6)
    assert overall["term_mae"] == pytest.approx(19.5)
    assert overall["retrieval_error_rate"] == pytest.approx(4 / 7)
    assert overall["tokens_mean"] == pytest.approx(1200)
    fraud = rows[2]
    assert (fraud["n"], fraud["charge_f1"], fraud["term_mae"], fraud["tokens_mean"]) == (1, 0.5, "", "")
    assert rows[4]["charge_acc"] == ""


def test_compare_side_by_side_with_deltas(result):
    better = evaluate(run_entries()[:1])  # e1 only: everything right
    rows = compare({"base": result, "new": better}, keys=["charges.accuracy", "term.mae", "no.such.metric"])
    assert [row["metric"] for row in rows] == ["charges.accuracy", "term.mae", "no.such.metric"]
    assert set(rows[0]) == {"metric", "base", "new", "delta_new"}
    assert rows[0]["base"] == pytest.approx(0.6) and rows[0]["new"] == 1.0
    assert rows[0]["delta_new"] == pytest.approx(0.4)
    assert rows[1]["delta_new"] == pytest.approx(-19.5)
    assert rows[2] == {"metric": "no.such.metric", "base": None, "new": None, "delta_new": None}


def test_compare_default_keys_and_single_run(result):
    rows = compare({"only": result})
    assert [row["metric"] for row in rows] == list(COMPARE_KEYS)
    assert set(rows[0]) == {"metric", "only"}
    by_key = {row["metric"]: row["only"] for row in rows}
    assert by_key["cost.llm_calls.mean"] == pytest.approx(2.8)
    assert by_key["retrieval.recall_verified"] == pytest.approx(0.4)
