"""The legal tokenizer keeps legal elements whole and is deterministic."""

import threading

import pytest

from lexlib.search.tokenize import LEGAL_DICT_PATH, Tokenizer, default_tokenizer, read_dict_file


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("被告人秘密窃取他人财物，数额较大。", "他人财物"),
        ("被告人秘密窃取他人财物，数额较大。", "数额较大"),
        ("被告人于当晚醉酒驾驶机动车在道路上行驶。", "醉酒驾驶"),
        ("诈骗公私财物，数额特别巨大的，处十年以上有期徒刑或者无期徒刑。", "数额特别巨大"),
        ("被告人入户盗窃，携带凶器，系累犯。", "携带凶器"),
        ("经鉴定，被害人的损伤程度为轻伤二级。", "轻伤"),
        ("以非法占有为目的，虚构事实，骗取他人钱款。", "虚构事实"),
    ],
)
def test_legal_terms_stay_one_token(tok: Tokenizer, text: str, term: str) -> None:
    assert term in tok.tokens(text)


def test_stopwords_punctuation_and_numbers_are_dropped(tok: Tokenizer) -> None:
    tokens = tok.tokens("2016年3月28日，被告人的 手机 价值人民币3723元 ×× 。")
    assert "的" not in tokens
    assert "3723" not in tokens and "2016" not in tokens
    assert not any(t.strip() in {"", "，", "。", "××", "×"} for t in tokens)
    assert "手机" in tokens


def test_fullwidth_digits_and_letters_are_folded(tok: Tokenizer) -> None:
    assert "180mg" in tok.tokens("血液酒精含量为１８０ＭＧ/100ml")


def test_charge_names_added_at_run_time_stay_whole() -> None:
    tok = Tokenizer()
    names = ["帮助信息网络犯罪活动罪", "组织出卖人体器官罪", "妨害信用卡管理罪"]
    assert "帮助信息网络犯罪活动罪" not in tok.tokens("构成帮助信息网络犯罪活动罪")
    before = tok.fingerprint()
    assert tok.add_words(names) == 3
    assert tok.add_words(names) == 0  # idempotent
    for name in names:
        assert name in tok.tokens(f"其行为已构成{name}，应予惩处。")
    assert tok.fingerprint() != before


def test_words_added_before_first_use_are_applied() -> None:
    tok = Tokenizer(extra_words=["组织出卖人体器官罪"])
    assert tok.tokens("组织出卖人体器官罪") == ["组织出卖人体器官罪"]


def test_names_with_punctuation_are_added_piece_by_piece() -> None:
    tok = Tokenizer()
    tok.add_words(["掩饰、隐瞒犯罪所得、犯罪所得收益罪"])
    # jieba always cuts at 、 so the pieces are the best it can keep.
    assert tok.tokens("掩饰、隐瞒犯罪所得、犯罪所得收益罪") == ["掩饰", "隐瞒犯罪所得", "犯罪所得收益罪"]


def test_deterministic_across_instances_and_threads(tok: Tokenizer) -> None:
    text = "公诉机关指控，被告人李某在某超市扒窃他人财物，价值人民币2800元，后被抓获归案，如实供述。"
    expected = tok.tokens(text)
    assert Tokenizer().tokens(text) == expected
    results: list[list[str]] = []

    def work() -> None:
        results.append(tok.tokens(text))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_lazy_initialisation_is_thread_safe() -> None:
    tok = Tokenizer()
    engines = []

    def work() -> None:
        engines.append(id(tok._engine()))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(engines)) == 1


def test_empty_text_and_default_instance() -> None:
    assert default_tokenizer().tokens("") == []
    assert default_tokenizer() is default_tokenizer()


def test_dictionary_file_is_well_formed() -> None:
    entries = read_dict_file(LEGAL_DICT_PATH)
    words = [w for w, _ in entries]
    assert len(words) >= 300
    assert len(words) == len(set(words)), "duplicate entries"
