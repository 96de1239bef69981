"""Struct-Neg contrastive training of a dense retriever: the sampler's levels, and a tiny random encoder learning."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from training.dense import StructNegSampler, embed, examples_from_cases, info_nce, recall_at_k, train

PROPERTY, ORDER = "第五章 侵犯财产罪", "第六章 妨害社会管理秩序罪"
STATUTES = [
    {"number": 263, "key": "263", "chapter": PROPERTY, "charges": ["抢劫罪"], "text": "以暴力胁迫方法抢劫公私财物的处有期徒刑"},
    {"number": 264, "key": "264", "chapter": PROPERTY, "charges": ["盗窃罪"], "text": "盗窃公私财物数额较大的处有期徒刑"},
    {"number": 266, "key": "266", "chapter": PROPERTY, "charges": ["诈骗罪"], "text": "诈骗公私财物数额较大的处有期徒刑"},
    {"number": 267, "key": "267", "chapter": PROPERTY, "charges": ["抢夺罪"], "text": "抢夺公私财物数额较大的处有期徒刑"},
    {"number": 224, "key": "224", "chapter": "第三章", "section": "第八节 扰乱市场秩序罪", "charges": ["合同诈骗罪"],
     "text": "以非法占有为目的在签订履行合同过程中骗取对方当事人财物"},
    {"number": 303, "key": "303", "chapter": ORDER, "section": "第一节 扰乱公共秩序罪", "charges": ["赌博罪"], "text": "以营利为目的聚众赌博的处有期徒刑"},
    {"number": 312, "key": "312", "chapter": ORDER, "section": "第二节 妨害司法罪", "charges": ["掩饰、隐瞒犯罪所得罪"],
     "text": "明知是犯罪所得而予以窝藏转移收购的处有期徒刑"},
]
CASES = [
    {"id": "a", "fact": "被告人秘密窃取他人手机", "articles": [264]},
    {"id": "b", "fact": "被告人窃取财物后销赃", "articles": [264, 312]},
    {"id": "c", "fact": "被告人虚构事实骗取钱款", "articles": [266]},
    {"id": "d", "fact": "被告人聚众赌博抽头渔利", "articles": [303]},
    {"id": "e", "fact": "被告人持刀抢劫路人财物", "articles": [263]},
    {"id": "f", "fact": "被告人趁人不备抢夺挎包", "articles": [267]},
]


@pytest.fixture
def sampler():
    return StructNegSampler(STATUTES, [c["articles"] for c in CASES], adjacent=1, seed=1)


def test_the_sampler_draws_from_the_section_the_neighbours_and_the_citation_graph(sampler):
    assert set(sampler.candidates("264", "section", set())) == {"263", "266", "267"}
    # Article order: 224 263 264 266 267 303 312; ±1 around 264.
    assert sampler.candidates("264", "adjacent", set()) == ["263", "266"]
    citation = sampler.candidates("266", "citation", set())
    assert "224" in citation  # 合同诈骗罪 ends like 诈骗罪
    assert sampler.candidates("264", "citation", set())[0] == "312"  # co-cited by precedent b
    # The query's own cited articles are never negatives.
    assert "312" not in sampler.candidates("264", "citation", {"264", "312"})
    drawn = sampler.sample("264", {"264", "312"}, 3)
    assert len({k for k, _ in drawn}) == 3 and {s for _, s in drawn} <= {"section", "adjacent"}  # 264 has no citation negative
    assert {s for _, s in sampler.sample("266", {"266"}, 3)} == {"section", "adjacent", "citation"}  # one per level in turn
    assert all(k not in {"264", "312"} for k, _ in drawn)
    for key, source in drawn:
        assert key in sampler.candidates("264", source, {"264", "312"})


def test_info_nce_is_low_when_each_query_is_closest_to_its_positive():
    q = torch.eye(3)
    good = info_nce(q, torch.eye(3), torch.arange(3), tau=0.05)
    bad = info_nce(q, torch.eye(3)[[1, 2, 0]], torch.arange(3), tau=0.05)
    assert float(good) < 1e-6 < float(bad)


def tiny_encoder(tmp_path):
    chars = sorted({ch for s in STATUTES for ch in s["text"]} | {ch for c in CASES for ch in c["fact"]})
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]), encoding="utf-8")
    tokenizer = transformers.BertTokenizer(str(tmp_path / "vocab.txt"))
    config = transformers.BertConfig(vocab_size=len(chars) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    return transformers.BertModel(config), tokenizer


def test_a_tiny_random_encoder_learns_on_cpu(sampler, tmp_path):
    model, tokenizer = tiny_encoder(tmp_path)
    examples = examples_from_cases(CASES, sampler)
    assert {(e.positive, frozenset(e.cited)) for e in examples} >= {("264", frozenset({"264", "312"})),
                                                                    ("312", frozenset({"264", "312"}))}
    losses = train(model, tokenizer, examples, sampler, steps=30, batch_size=4, hard_negatives=2, lr=1e-3, tau=0.1,
                   max_length=48, pooling="mean", log_every=0)
    assert len(losses) == 30 and all(torch.isfinite(torch.tensor(losses)))
    assert sum(losses[-5:]) / 5 < 0.7 * sum(losses[:5]) / 5
    with torch.no_grad():
        v = embed(model, tokenizer, ["盗窃"], max_length=16, pooling="cls", device="cpu")
    assert torch.allclose(v.norm(dim=-1), torch.ones(1))
    assert 0.0 <= recall_at_k(model, tokenizer, examples, sampler, k=3, max_length=48, pooling="mean") <= 1.0
