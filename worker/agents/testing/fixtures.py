"""A tiny, hand-written legal graph for pure tests of the reasoning core.

All content is illustrative, written for Lextrace tests: statute texts are
short paraphrases, interpretations and cases are invented. Never use them as
legal information.

Shape (pks chosen so that a test failure message is readable):
- articles 1..6: 67 自首 (general part, defines no charge), 133 交通肇事罪,
  133-1 危险驾驶罪 (sub=1), 234 故意伤害罪, 264 盗窃罪, 266 诈骗罪;
  133-1 REFERS_TO 133;
- article 264 has two text versions: 51 (to 2011-04-30) and 52 (from
  2011-05-01, adding 入户盗窃/携带凶器盗窃/扒窃); every version has a checklist;
- interpretations 1..3 (264; 266; 133-1 and 133);
- cases 101..115: theft 101-106 (105 also fraud), fraud 107-110, traffic
  111-113, injury 114-115; 3 kNN neighbours each, with one exact score tie
  (101 -> 102 and 101 -> 106 both 0.88);
- communities 1 (theft), 2 (fraud), 3 (traffic); cases 114 and 115 were added
  after the last rebuild and have no community yet.
"""

from __future__ import annotations

import datetime as dt

from worker.agents.graph_types import Term
from worker.agents.testing.memory_store import InMemoryGraphStore

AMENDMENT_VIII = dt.date(2011, 5, 1)

# (pk, number, sub, charges)
_ARTICLES: tuple[tuple[int, int, int, tuple[str, ...]], ...] = (
    (1, 67, 0, ()),
    (2, 133, 0, ("交通肇事罪",)),
    (3, 133, 1, ("危险驾驶罪",)),
    (4, 234, 0, ("故意伤害罪",)),
    (5, 264, 0, ("盗窃罪",)),
    (6, 266, 0, ("诈骗罪",)),
)

# (version_pk, article_pk, text, valid_from, valid_to, checklist questions)
_VERSIONS: tuple[tuple[int, int, str, dt.date | None, dt.date | None, tuple[str, ...]], ...] = (
    (
        11, 1,
        "（示例）犯罪以后主动到案并如实交代自己罪行的，是自首；对自首的犯罪分子，可以从轻或者减轻处罚。",
        None, None,
        ("是否在犯罪后主动到案", "是否如实交代自己的主要犯罪事实", "到案后是否翻供"),
    ),
    (
        21, 2,
        "（示例）违反交通运输管理法规，因而发生重大事故，致人重伤、死亡或者使财产遭受重大损失的，处三年以下有期徒刑或者拘役；"
        "肇事后逃逸的，处三年以上七年以下有期徒刑。",
        None, None,
        ("是否违反交通运输管理法规", "是否发生致人重伤、死亡或重大财产损失的事故", "是否负事故主要或全部责任", "是否肇事后逃逸"),
    ),
    (
        31, 3,
        "（示例）在道路上醉酒驾驶机动车，或者追逐竞驶情节恶劣的，处拘役，并处罚金；同时构成其他犯罪的，依照处罚较重的规定定罪处罚。",
        AMENDMENT_VIII, None,
        ("是否在道路上驾驶机动车", "血液酒精含量是否达到醉酒标准", "是否有情节恶劣的追逐竞驶", "是否同时构成其他犯罪"),
    ),
    (
        41, 4,
        "（示例）故意伤害他人身体的，处三年以下有期徒刑、拘役或者管制；致人重伤的，处三年以上十年以下有期徒刑；"
        "致人死亡或者以特别残忍手段致人重伤造成严重残疾的，处十年以上有期徒刑、无期徒刑或者死刑。",
        None, None,
        ("是否故意实施伤害他人身体的行为", "是否造成轻伤以上后果", "是否致人重伤或者死亡", "是否以特别残忍手段致人严重残疾"),
    ),
    (
        51, 5,
        "（示例，修正前）盗窃公私财物，数额较大或者多次盗窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；数额巨大的，处三年以上十年以下有期徒刑。",
        None, AMENDMENT_VIII - dt.timedelta(days=1),
        ("是否以非法占有为目的", "是否秘密窃取公私财物", "数额是否较大或者是否多次盗窃"),
    ),
    (
        52, 5,
        "（示例，修正后）盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；"
        "数额巨大或者有其他严重情节的，处三年以上十年以下有期徒刑，并处罚金。",
        AMENDMENT_VIII, None,
        ("是否以非法占有为目的", "是否秘密窃取公私财物", "数额是否较大", "是否有多次盗窃、入户盗窃、携带凶器盗窃或扒窃情形", "数额是否巨大或有其他严重情节"),
    ),
    (
        61, 6,
        "（示例）诈骗公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；数额巨大的，处三年以上十年以下有期徒刑；"
        "数额特别巨大的，处十年以上有期徒刑或者无期徒刑。",
        None, None,
        ("是否以非法占有为目的", "是否虚构事实或者隐瞒真相", "被害人是否因错误认识而处分财产", "数额是否较大"),
    ),
)  # fmt: skip

# (pk, source, para, text, article pks)
_INTERPRETATIONS: tuple[tuple[int, str, str, str, tuple[int, ...]], ...] = (
    (1, "示例：盗窃案件适用法律的解释（测试用）", "第三条",
     "第三条　非法进入供他人家庭生活、与外界相对隔离的住所盗窃的，应当认定为入户盗窃。", (5,)),
    (2, "示例：诈骗案件适用法律的解释（测试用）", "第一条",
     "诈骗数额的认定以行为人实际骗取的财物价值为准；利用电信网络实施诈骗的，可以酌情从重处罚。", (6,)),
    (3, "示例：醉酒驾驶案件的处理意见（测试用）", "第三条",
     "醉酒驾驶机动车造成重大事故，同时构成交通肇事罪的，依照处罚较重的规定定罪处罚。", (3, 2)),
)  # fmt: skip

# (pk, ext_id, charges, article pks, term, court level, features by dimension)
_CASES: tuple[tuple[int, str, tuple[str, ...], tuple[int, ...], Term, str, dict[str, tuple[str, ...]]], ...] = (
    (101, "TINY-101", ("盗窃罪",), (5,), Term(months=8), "basic",
     {"defendant": ("成年人",), "behaviour": ("入户", "秘密窃取"), "victim": ("个人财产",), "mental": ("非法占有目的",)}),
    (102, "TINY-102", ("盗窃罪",), (5, 1), Term(months=6), "basic",
     {"defendant": ("成年人", "自首"), "behaviour": ("扒窃",), "victim": ("个人财产",), "mental": ("非法占有目的",)}),
    (103, "TINY-103", ("盗窃罪",), (5,), Term(months=40), "intermediate",
     {"defendant": ("累犯",), "behaviour": ("入户", "秘密窃取", "多次盗窃", "数额巨大"), "victim": ("个人财产",),
      "mental": ("非法占有目的",)}),
    (104, "TINY-104", ("盗窃罪",), (5,), Term(months=10), "basic",
     {"defendant": ("成年人",), "behaviour": ("携带凶器", "秘密窃取", "数额较大"), "victim": ("单位财产",),
      "mental": ("非法占有目的",)}),
    (105, "TINY-105", ("盗窃罪", "诈骗罪"), (5, 6), Term(months=30), "intermediate",
     {"defendant": ("成年人",), "behaviour": ("秘密窃取", "虚构事实", "数额较大"), "victim": ("个人财产",),
      "mental": ("非法占有目的",)}),
    (106, "TINY-106", ("盗窃罪",), (5, 1), Term(months=4), "basic",
     {"defendant": ("成年人", "自首"), "behaviour": ("秘密窃取", "数额较大"), "victim": ("个人财产",),
      "mental": ("非法占有目的",)}),
    (107, "TINY-107", ("诈骗罪",), (6,), Term(months=12), "basic",
     {"defendant": ("成年人",), "behaviour": ("虚构事实", "电信网络", "数额较大"), "victim": ("个人财产",),
      "mental": ("非法占有目的",)}),
    (108, "TINY-108", ("诈骗罪",), (6, 1), Term(months=42), "intermediate",
     {"defendant": ("成年人", "自首"), "behaviour": ("虚构事实", "数额巨大"), "victim": ("个人财产",),
      "mental": ("非法占有目的",)}),
    (109, "TINY-109", ("诈骗罪",), (6,), Term(months=8), "basic",
     {"defendant": ("成年人",), "behaviour": ("冒充身份", "隐瞒真相", "数额较大"), "victim": ("老年人",),
      "mental": ("非法占有目的",)}),
    (110, "TINY-110", ("诈骗罪",), (6,), Term(months=132), "high",
     {"defendant": ("犯罪集团首要分子",), "behaviour": ("虚构事实", "电信网络", "数额特别巨大"), "victim": ("不特定多数人",),
      "mental": ("非法占有目的",)}),
    (111, "TINY-111", ("危险驾驶罪",), (3,), Term(months=2), "basic",
     {"defendant": ("成年人",), "behaviour": ("醉酒驾驶", "道路行驶"), "victim": ("公共安全",), "mental": ("故意",)}),
    (112, "TINY-112", ("危险驾驶罪",), (3, 1), Term(months=1), "basic",
     {"defendant": ("成年人", "自首"), "behaviour": ("醉酒驾驶", "道路行驶"), "victim": ("公共安全",), "mental": ("故意",)}),
    (113, "TINY-113", ("交通肇事罪",), (2,), Term(months=30), "basic",
     {"defendant": ("成年人",), "behaviour": ("违章驾驶", "致人死亡", "肇事逃逸"), "victim": ("行人",), "mental": ("过失",)}),
    (114, "TINY-114", ("故意伤害罪",), (4,), Term(months=18), "basic",
     {"defendant": ("成年人",), "behaviour": ("殴打", "轻伤二级"), "victim": ("邻居",), "mental": ("伤害故意",)}),
    (115, "TINY-115", ("故意伤害罪",), (4,), Term(life=True), "intermediate",
     {"defendant": ("成年人",), "behaviour": ("持刀", "致人死亡"), "victim": ("同事",), "mental": ("伤害故意",)}),
)  # fmt: skip

# Directed kNN edges (k = 3), as the offline build would write them.
_SIMILAR: tuple[tuple[int, int, float], ...] = (
    (101, 103, 0.91), (101, 102, 0.88), (101, 106, 0.88),
    (102, 106, 0.93), (102, 101, 0.88), (102, 104, 0.80),
    (103, 101, 0.91), (103, 104, 0.83), (103, 106, 0.79),
    (104, 106, 0.86), (104, 103, 0.83), (104, 101, 0.81),
    (105, 106, 0.84), (105, 107, 0.82), (105, 104, 0.78),
    (106, 102, 0.93), (106, 104, 0.86), (106, 101, 0.88),
    (107, 110, 0.90), (107, 108, 0.87), (107, 105, 0.82),
    (108, 107, 0.87), (108, 109, 0.84), (108, 110, 0.83),
    (109, 108, 0.84), (109, 107, 0.80), (109, 110, 0.76),
    (110, 107, 0.90), (110, 108, 0.83), (110, 109, 0.76),
    (111, 112, 0.97), (111, 113, 0.74), (111, 114, 0.41),
    (112, 111, 0.97), (112, 113, 0.72), (112, 114, 0.40),
    (113, 111, 0.74), (113, 112, 0.72), (113, 115, 0.52),
    (114, 115, 0.81), (114, 113, 0.45), (114, 111, 0.41),
    (115, 114, 0.81), (115, 113, 0.52), (115, 112, 0.38),
)  # fmt: skip

# Extractive summaries in the format of lexlib.clustering.summarize_community
# (tests/graph/test_clustering.py checks they are what it produces for these members).
_COMMUNITIES: tuple[tuple[int, tuple[str, ...], tuple[int, ...], str], ...] = (
    (1, ("盗窃罪", "诈骗罪"), (101, 102, 103, 104, 105, 106),
     "本社区共6件案例，主要罪名：盗窃罪（6）、诈骗罪（1）；典型情节：非法占有目的、个人财产、成年人、秘密窃取、数额较大；"
     "代表案例：106、101、104。"),
    (2, ("诈骗罪",), (107, 108, 109, 110),
     "本社区共4件案例，主要罪名：诈骗罪（4）；典型情节：非法占有目的、成年人、虚构事实、个人财产、数额较大；"
     "代表案例：107、108、109。"),
    (3, ("危险驾驶罪", "交通肇事罪"), (111, 112, 113),
     "本社区共3件案例，主要罪名：危险驾驶罪（2）、交通肇事罪（1）；典型情节：成年人、公共安全、故意、道路行驶、醉酒驾驶；"
     "代表案例：111、112、113。"),
)  # fmt: skip


def tiny_legal_graph() -> InMemoryGraphStore:
    """A fresh store with the graph described in the module docstring (safe to mutate)."""
    store = InMemoryGraphStore()
    for pk, number, sub, charges in _ARTICLES:
        store.add_article(pk, number, sub=sub, charges=charges)
    store.add_reference(3, 2)  # 133-1: "同时构成其他犯罪的，依照处罚较重的规定"
    for version_pk, article_pk, text, valid_from, valid_to, questions in _VERSIONS:
        store.add_article_text(version_pk, article_pk, text, valid_from=valid_from, valid_to=valid_to)
        store.add_checklist(version_pk, questions)
    for pk, source, para, text, article_pks in _INTERPRETATIONS:
        store.add_interpretation(pk, source, para, text, article_pks)
    for pk, ext_id, charges, article_pks, term, court_level, features in _CASES:
        store.add_case(
            pk, ext_id, charges=charges, article_pks=article_pks, term=term, court_level=court_level, features=features
        )
    for src, dst, score in _SIMILAR:
        store.add_similarity(src, dst, score)
    for pk, top_charges, members, summary in _COMMUNITIES:
        store.add_community(pk, summary=summary, top_charges=top_charges, members=members)
    return store


class FixedProbabilities:
    """A stand-in for a trained classifier in pure tests: fixed calibrated probabilities, whatever the text.

    It answers the part of LinearTextModel's interface the statistical strategy uses: ``labels``,
    ``decision`` (the logits of the probabilities), an identity ``calibration``, ``vectorize`` (a
    character-bigram bag, so the legal-text similarity is defined) and ``metadata["label_counts"]``.
    """

    def __init__(self, probs: dict[str, float], *, model_id: str = "fixed-probabilities", label_counts: dict | None = None):
        import numpy as np

        self._np = np
        self.model_id = model_id
        self.labels = list(probs) or ["—"]
        p = np.clip(np.array([probs.get(label, 1e-6) for label in self.labels], dtype=np.float64), 1e-6, 1 - 1e-6)
        self._z = np.log(p / (1 - p))
        self.calibration = np.tile([1.0, 0.0], (len(self.labels), 1))
        self.metadata = {"label_counts": dict(label_counts or {label: 10 for label in self.labels})}

    def decision(self, tokens):
        return self._z.copy()

    def vectorize(self, tokens):
        np = self._np
        text = "".join(tokens)
        grams = sorted({text[i:i + 2] for i in range(len(text) - 1)})
        idx = np.array([int.from_bytes(g.encode("utf-8")[:6].ljust(6, b"\0"), "big") % 100003 for g in grams], dtype=np.int64)
        idx, _ = np.unique(idx, return_index=True)
        vals = np.full(len(idx), 1.0 / np.sqrt(len(idx))) if len(idx) else np.zeros(0)
        return idx, vals

    def top(self, tokens, k=5, min_p=0.0):
        p = 1 / (1 + self._np.exp(-self._z))
        ranked = sorted(zip(self.labels, p), key=lambda kv: -kv[1])
        return [(label, float(q)) for label, q in ranked if q >= min_p][:k]
