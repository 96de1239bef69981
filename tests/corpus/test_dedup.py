"""Duplicate detection (lexlib/parsing/dedup.py): pure, on facts we write here."""

from lexlib.parsing.dedup import BOILERPLATE_DF, near_duplicates, norm_sha256, norm_text

THEFT = ("公诉机关指控：二〇一八年五月三日晚，被告人张某在某市某区一商场三楼的服装店内，趁店员整理货架之机，"
         "将柜台上一部价值人民币四千二百元的手机揣入口袋后离开，次日在其暂住处被民警抓获，手机已追回发还。")
FRAUD = ("经审理查明：二〇一九年七月至九月间，被告人李某谎称能够为他人办理子女入学，先后收取三名被害人"
         "好处费共计人民币六万元，所得钱款用于偿还个人赌债。案发后李某家属退赔全部款项，取得被害人谅解。")


def test_normalisation_drops_whitespace_punctuation_and_symbols_and_folds_widths():
    assert norm_text("被告人 张某，（男）×× 于２０１８年！") == "被告人张某男于2018年"
    assert norm_sha256("张某， 盗窃。") == norm_sha256("张某盗窃") != norm_sha256("李某盗窃")


def test_an_anonymised_copy_of_a_stored_fact_is_a_near_duplicate():
    copy = THEFT.replace("张某", "张某某").replace("四千二百元", "四千二百余元")
    matches = near_duplicates([norm_text(FRAUD), norm_text(THEFT)], [norm_text(copy)])
    assert set(matches) == {0}
    assert matches[0].stored and matches[0].other == 1 and matches[0].containment >= 0.5


def test_a_shorter_excerpt_contained_in_a_stored_fact_is_a_near_duplicate_of_it():
    excerpt = THEFT[: len(THEFT) * 2 // 3]
    assert near_duplicates([norm_text(THEFT)], [norm_text(excerpt)])[0].other == 0


def test_distinct_facts_are_not_duplicates():
    assert near_duplicates([norm_text(THEFT)], [norm_text(FRAUD)]) == {}


def test_inside_one_file_the_later_copy_is_merged_into_the_earlier_one_and_chains_do_not_collapse():
    first, second = norm_text(THEFT), norm_text(THEFT.replace("张某", "王某"))
    third = norm_text(THEFT.replace("张某", "赵某"))
    matches = near_duplicates([], [first, second, third])
    assert {k: (m.stored, m.other) for k, m in matches.items()} == {1: (False, 0), 2: (False, 0)}


def test_shingles_shared_by_many_facts_are_boilerplate_and_ignored():
    boiler = "其行为已触犯中华人民共和国刑法应当以盗窃罪追究其刑事责任犯罪事实清楚证据确实充分"
    # Facts that share only a long boilerplate sentence, each with its own story of similar length.
    stored = [norm_text(f"被告人甲{i}号于某日在第{i}号仓库窃取铜线{i}米价值{i}百元并销赃给收购站{i}号{boiler}")
              for i in range(BOILERPLATE_DF + 5)]
    new = norm_text(f"被告人乙某于案发当晚翻墙进入某小区车库盗走电动车两辆后骑行逃离{boiler}")
    assert near_duplicates(stored, [new]) == {}


def test_short_facts_need_a_difflib_match_too():
    stored = ["被告人甲某第1次盗窃他人财物"]
    assert near_duplicates(stored, ["被告人甲某第2次盗窃他人财物"]) == {}, "one different digit in a short fact is another case"
    assert near_duplicates(stored, ["被告人甲某第1次盗窃他人财物了"])[0].other == 0


def test_facts_shorter_than_a_shingle_are_only_compared_exactly():
    assert near_duplicates(["张某盗窃"], ["张某盗窃"]) == {}
    assert near_duplicates([], []) == {}
