"""BM25Index: ranking, determinism, persistence without pickle, and the real corpus."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from lexlib.search.bm25 import ARRAYS_FILE, BM25Index, top_k_stable
from lexlib.search.tokenize import Tokenizer

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("LEXTRACE_SHARED_DATA", ROOT.parent / "shared" / "data"))

DOCS = {
    "theft": "被告人以非法占有为目的，秘密窃取他人财物，数额较大，其行为构成盗窃罪。",
    "fraud": "被告人虚构事实、隐瞒真相，骗取被害人钱款人民币五万元，数额巨大。",
    "drunk": "被告人醉酒驾驶机动车在道路上行驶，经检测血液酒精含量为每百毫升一百八十毫克。",
    "injury": "被告人因琐事与被害人发生争执，持木棍殴打被害人头部，致其轻伤二级。",
    "robbery": "被告人持刀入户抢劫，劫取被害人手机一部及现金若干。",
    "gambling": "被告人以营利为目的，在其经营的茶楼内开设赌场，抽头渔利。",
}


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture(scope="module")
def index(tok: Tokenizer) -> BM25Index:
    return BM25Index.build(list(DOCS), [tok.tokens(t) for t in DOCS.values()])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("盗窃他人财物", "theft"),
        ("醉酒驾驶血液酒精含量超标", "drunk"),
        ("虚构事实骗取钱款", "fraud"),
        ("殴打致人轻伤", "injury"),
        ("开设赌场营利", "gambling"),
    ],
)
def test_expected_document_ranks_first(index: BM25Index, tok: Tokenizer, query: str, expected: str) -> None:
    hits = index.search(tok.tokens(query), k=3)
    assert hits[0][0] == expected
    assert all(score > 0 for _, score in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_empty_and_unknown_queries_return_nothing(index: BM25Index) -> None:
    assert index.search([]) == []
    assert index.search(["不存在的词"]) == []
    assert index.search_many([[], ["盗窃"]], k=2)[0] == []


def test_only_matching_documents_are_returned(index: BM25Index) -> None:
    hits = index.search(["茶楼"], k=10)
    assert [d for d, _ in hits] == ["gambling"]


def test_ties_are_broken_by_document_order() -> None:
    idx = BM25Index.build([30, 10, 20, 40], [["甲", "乙"], ["甲", "乙"], ["丙"], ["甲", "乙"]])
    assert [d for d, _ in idx.search(["甲"], k=2)] == [30, 10]
    assert [d for d, _ in idx.search(["甲"], k=10)] == [30, 10, 40]
    assert top_k_stable(np.array([1.0, 2.0, 2.0, 0.0, 2.0]), 2).tolist() == [1, 2]


def test_save_load_round_trip(index: BM25Index, tok: Tokenizer, tmp_path: Path) -> None:
    index.metadata["tokenizer"] = tok.fingerprint()
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert len(loaded) == len(index) == len(DOCS)
    assert loaded.doc_ids == index.doc_ids
    assert loaded.metadata["tokenizer"] == tok.fingerprint()
    for query in ("盗窃他人财物", "被告人", "醉酒驾驶", "持刀抢劫手机"):
        q = tok.tokens(query)
        assert loaded.search(q, k=10) == index.search(q, k=10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bm25.json", "bm25.npz"]


def test_int_ids_survive_round_trip(tmp_path: Path) -> None:
    idx = BM25Index.build([7, 3], [["盗窃"], ["诈骗"]])
    idx.save(tmp_path)
    assert BM25Index.load(tmp_path).search(["诈骗"]) == [(3, pytest.approx(idx.search(["诈骗"])[0][1]))]


def test_pickled_arrays_are_refused(index: BM25Index, tmp_path: Path) -> None:
    index.save(tmp_path)
    with np.load(tmp_path / ARRAYS_FILE) as arrays:
        parts = dict(arrays)
    parts["data"] = np.array([{"evil": 1}], dtype=object)
    np.savez(tmp_path / ARRAYS_FILE, **parts, allow_pickle=True)
    with pytest.raises(ValueError):
        BM25Index.load(tmp_path)


def test_invalid_input_is_rejected() -> None:
    with pytest.raises(ValueError):
        BM25Index.build(["a", "a"], [["x"], ["y"]])
    with pytest.raises(ValueError):
        BM25Index.build(["a"], [["x"], ["y"]])
    with pytest.raises(TypeError):
        BM25Index.build([1.5], [["x"]])


def test_empty_index() -> None:
    idx = BM25Index.build([], [])
    assert len(idx) == 0 and idx.search(["盗窃"]) == []
    idx = BM25Index.build(["a"], [[]])
    assert len(idx) == 1 and idx.search(["盗窃"]) == []


@pytest.mark.slow
def test_full_corpus_exact_fact_finds_its_case(tok: Tokenizer, tmp_path: Path) -> None:
    cases_path = SHARED_DATA / "cases.jsonl"
    if not cases_path.exists():
        pytest.skip(f"shared corpus not found at {cases_path} (set LEXTRACE_SHARED_DATA)")
    with cases_path.open(encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh]
    assert len(cases) > 10_000
    index = BM25Index.build([c["id"] for c in cases], tok.tokens_many(c["fact"] for c in cases))
    probes = [cases[0], cases[len(cases) // 2], cases[-1]]
    for case in probes:
        assert index.search(tok.tokens(case["fact"]), k=5)[0][0] == case["id"]
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert loaded.search(tok.tokens(probes[1]["fact"]), k=5) == index.search(tok.tokens(probes[1]["fact"]), k=5)
