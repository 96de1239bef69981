"""The passage of an interpretation that bears on an article (worker/agents/prompts/passages.py)."""

import pytest

from worker.agents.prompts.passages import GAP, article_ref, interpretation_passage

HEAD = "示例解释第四条　"


@pytest.mark.parametrize(("key", "ref"), [("264", (264, 0)), ("133-1", (133, 1)), ("A1", None), ("133-x", None)])
def test_article_keys_are_read_as_number_and_sub(key, ref):
    assert article_ref(key) == ref


def test_the_repeated_heading_goes_and_the_source_stays_even_when_the_first_paragraph_does_not():
    text = "示例解释第八条　第八条刑法第三百二十八条规定的“古墓葬”包括水下古墓葬。\n盗掘古墓葬既遂的认定。\n盗窃古建筑的，依照刑法第二百六十四条的规定处罚。"
    assert interpretation_passage(text, [(264, 0)]) == f"示例解释第八条　{GAP}\n盗窃古建筑的，依照刑法第二百六十四条的规定处罚。"
    assert interpretation_passage(text, [(328, 0)]) == ("示例解释第八条　刑法第三百二十八条规定的“古墓葬”包括水下古墓葬。\n"
                                                        f"盗掘古墓葬既遂的认定。\n{GAP}")
    assert interpretation_passage(text, []).startswith("示例解释第八条　刑法第三百二十八条")


def test_an_article_with_its_own_sub_number_is_another_article():
    text = HEAD + "持有伪造的信用卡的，应当认定为刑法第一百七十七条之一第一款规定的“数量巨大”。"
    assert interpretation_passage(text, [(177, 0)]) is None
    assert interpretation_passage(text, [(177, 1)]) == text


def test_a_range_of_articles_covers_the_ones_inside_it():
    text = HEAD + "触犯刑法分则第九章第三百九十八条至第四百一十九条规定的，依照该规定定罪处罚。"
    assert interpretation_passage(text, [(400, 0)]) == text
    assert interpretation_passage(text, [(397, 0)]) is None


def test_a_list_goes_with_the_line_that_opens_it_even_when_an_item_cites_something():
    text = (HEAD + "具有下列情形之一的，应当认定为刑法第二百八十八条规定的“情节严重”：\n"
            "（一）有刑法第六十七条规定的情形而不如实供述的；\n１、其他情形。\n"
            "单位犯刑法第三百四十二条规定之罪的，依照本解释处罚。")
    assert interpretation_passage(text, [(288, 0)]) == text.rsplit("\n", 1)[0] + "\n" + GAP
    assert interpretation_passage(text, [(342, 0)]) == HEAD + GAP + "\n单位犯刑法第三百四十二条规定之罪的，依照本解释处罚。"


def test_only_criminal_law_articles_count_as_references():
    # Articles of the interpretation itself and of other laws do not make a paragraph "about" them.
    text = (HEAD + "违反刑法第三百四十三条，具有本解释第二条规定情形的，从重处罚。\n"
            "违反《中华人民共和国矿产资源法》第三条的，依照刑法第三百四十三条处罚。\n"
            "（第４００条）私放在押人员案的立案标准。")
    assert interpretation_passage(text, [(343, 0)]) == text
    assert interpretation_passage(text, [(2, 0)]) is None
    assert interpretation_passage(text, [(3, 0)]) is None
    # Without "刑法" a paragraph cites nothing that can be read, and is kept with the one before it.
    assert interpretation_passage(HEAD + "（第４００条）私放在押人员案的立案标准。", [(264, 0)]) == HEAD + "（第４００条）私放在押人员案的立案标准。"


def test_text_without_references_is_kept_whole():
    assert interpretation_passage("数额较大的标准……", [(264, 0)]) == "数额较大的标准……"
