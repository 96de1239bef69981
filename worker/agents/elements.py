"""The statistical element check: is a checklist item (an element of an offence) shown by the facts?

An item is supported when one passage of the facts shows it, by one of three rules, each of which the
evidence viewer can quote:

- terms: at least half of the item's content (character bigrams, question scaffolding removed) occurs in
  one sentence ("醉酒驾驶机动车" in "…醉酒驾驶机动车在道路上行驶…");
- concepts: the item names concepts of our lexicon (worker/agents/features.py, e.g. 秘密窃取 for "盗窃",
  劫取财物 for "抢劫", 暴力 for "暴力") and a window of three sentences shows them through the concept's own
  expressions ("盗走", "抢走", "殴打"). An item listing alternatives ("、", "或") is shown by any one of
  them, and each alternative needs every concept it names ("暴力、胁迫或者其他方法" by 暴力 alone; "入户抢劫、
  多次抢劫" needs 入户 *and* 劫取财物, never 入户 alone). Generic concepts (财物, 被害人, 故意 …) are not
  required: every property offence has property;
- anchor: the item's most specific content word (the rarest among all checklist items, and rare enough:
  at most ``ANCHOR_MAX_DF`` items use it) occurs in a sentence ("吸收公众存款", "罂粟").

Measured on the development split (``python -m training.element_coverage --cases .local/dev-split.jsonl
--checklists ../shared/data/checklists.jsonl --train ../shared/data/cases.jsonl``, 2026-12-03): 356 of the
421 gold articles (84.6 %) have a supported item (the rest are mostly CAIL facts whose charge words are
masked as "××": nothing there can show the element, and nothing is claimed), against 1,511 of 6,515
(23.2 %) for the twelve most cited other articles (the killing expressions added 25 of those and no gold
one: kept because a plain killing showed no element of murder at all).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from worker.agents.features import DEFAULT_PATTERNS, SENTENCE_RE
from worker.agents.verifier import grams, item_content

TERMS_SHARE = 0.5
ANCHOR_MAX_DF = 30
WINDOW = 3  # sentences a conjunction of concepts may span
GENERIC = frozenset({"公私财物", "人身", "故意", "以非法占有为目的", "社会管理秩序", "公共安全"})
SCAFFOLD = frozenset({"是否", "属于", "行为", "行为人", "其他", "或者", "以及", "并且", "情节", "严重", "构成", "被告人"})
ALTERNATIVES = re.compile(r"或|、")
# Items about the sentence or the classification, not about the conduct ("是否处三年以下有期徒刑",
# "是否同时构成其他犯罪", "是否对单位判处罚金"): the facts cannot show them, so they are never supported.
NOT_AN_ELEMENT = re.compile(r"^是否(?:应当|可以)?(?:处|判处|并处|单处|同时构成|依照|对单位判处|从重处罚|从轻|减轻|免除)")

# Expressions the element check adds to a lexicon concept (courts' usual wording of the element).
ELEMENT_EXPRESSIONS = {
    "秘密窃取": r"窃得|窃走|偷得|盗取|行窃",
    "伤害他人": r"致.{0,4}伤|轻伤|重伤|伤害|打伤|砍伤|刺伤|损伤|伤势",
    "贩卖毒品": (r"(?:贩卖|出售|卖给|售给).{0,30}?(?:毒品|甲基苯丙胺|海洛因|冰毒|麻古|氯胺酮|大麻|吗啡)"
                r"|(?:毒品|甲基苯丙胺|海洛因|冰毒|麻古|氯胺酮).{0,30}?(?:贩卖|出售|卖给|售给)"),
    "性侵害": r"抚摸|摸.{0,6}?(?:胸|下体|阴部|臀)|亲吻|搂抱|脱.{0,4}?(?:裤|衣)",
    "非法采伐捕猎": r"猎捕|捕捉|捕获|网捕|电捕|收购.{0,10}?(?:树|木|皮|植物)",
    # killing: the act and its result as items name them ("剥夺他人生命", "造成…死亡") and as facts state them
    "杀害": r"剥夺(?:他人)?生命|(?:致|造成)(?:其|人|被害人|.某)?.{0,6}?(?:死亡|身亡)|砍死|刺死|打死",
    "容留吸毒": r"提供.{0,12}?(?:房屋|住处|住所|住宅|车辆|包间|出租屋).{0,16}?吸(?:食|毒)|让.{0,12}?在.{0,8}?吸(?:食|毒)",
}


def _concepts() -> list[tuple[str, re.Pattern]]:
    out = []
    for _dimension, label, pattern in DEFAULT_PATTERNS:
        extra = ELEMENT_EXPRESSIONS.get(label)
        out.append((label, re.compile(f"{pattern}|{extra}" if extra else pattern)))
    return out


CONCEPTS = _concepts()


@dataclass(frozen=True)
class Support:
    satisfied: bool
    rule: str  # terms | concepts | anchor | not_an_element | "" (not shown)
    share: float  # the best sentence's share of the item's content bigrams
    span: tuple[int, int] | None  # where in the facts
    shown: tuple[str, ...] = ()  # the concepts, or the anchor word, that showed it


class ElementChecker:
    """Checks items against one fact text; ``item_df`` counts the checklist items using each word
    (over every checklist of the corpus), for the anchor rule; ``tokenize`` splits an item into words."""

    def __init__(self, *, tokenize: Callable[[str], list[str]], item_df: Counter | dict[str, int], n_items: int):
        self.tokenize = tokenize
        self.item_df = dict(item_df)
        self.n_items = max(1, int(n_items))
        self._item_cache: dict[str, tuple] = {}

    @classmethod
    def from_items(cls, questions: Iterable[str], *, tokenize: Callable[[str], list[str]]) -> ElementChecker:
        questions = list(questions)
        df = Counter(word for q in questions for word in set(content_words(q, tokenize)))
        return cls(tokenize=tokenize, item_df=df, n_items=len(questions))

    def _item(self, question: str):
        found = self._item_cache.get(question)
        if found is None:
            content = item_content(question)
            specific = any(label not in GENERIC for label, p in CONCEPTS if p.search(question))
            required = [r for segment in ALTERNATIVES.split(question) if (r := self._required(segment, specific))]
            words = [w for w in content_words(question, self.tokenize) if w in self.item_df]
            anchor = max(words, key=lambda w: (math.log(self.n_items / self.item_df[w]), w), default=None)
            if anchor is not None and self.item_df[anchor] > ANCHOR_MAX_DF:
                anchor = None
            found = (grams(content), required, anchor)
            self._item_cache[question] = found
        return found

    @staticmethod
    def _required(text: str, specific: bool) -> list[tuple[str, re.Pattern]]:
        """The concepts one alternative names; generic ones only when the whole item names nothing else."""
        return [(label, p) for label, p in CONCEPTS if p.search(text) and not (specific and label in GENERIC)]

    def check(self, facts: str, questions: Sequence[str]) -> list[Support]:
        sentences = [(m.start(), m.end(), m.group()) for m in SENTENCE_RE.finditer(facts)] or [(0, len(facts), facts)]
        sentence_grams = [grams(s) for _, _, s in sentences]
        windows = [(sentences[i][0], sentences[min(i + WINDOW, len(sentences)) - 1][1]) for i in range(len(sentences))]
        out = []
        for question in questions:
            if NOT_AN_ELEMENT.search(question):
                out.append(Support(False, "not_an_element", 0.0, None))
                continue
            wanted, required, anchor = self._item(question)
            best, where = 0.0, None
            for (start, end, _), sg in zip(sentences, sentence_grams):
                share = len(wanted & sg) / len(wanted) if wanted else 0.0
                if share > best:
                    best, where = share, (start, end)
            if best >= TERMS_SHARE:
                out.append(Support(True, "terms", round(best, 4), where))
                continue
            shown = self._concepts_shown(facts, windows, required)
            if shown:
                out.append(Support(True, "concepts", round(best, 4), shown[0], tuple(shown[1])))
                continue
            hit = next(((s, e) for s, e, text in sentences if anchor and anchor in text), None)
            if hit:
                out.append(Support(True, "anchor", round(best, 4), hit, (anchor,)))
                continue
            out.append(Support(False, "", round(best, 4), None))
        return out

    @staticmethod
    def _concepts_shown(facts: str, windows, required):
        """(span, concepts) of the first window showing every concept of one alternative, else None."""
        for start, end in windows:
            text = facts[start:end]
            for alternative in required:
                if all(pattern.search(text) for _, pattern in alternative):
                    first = min(m.start() for _, p in alternative if (m := p.search(text)))
                    sentence = next((m for m in SENTENCE_RE.finditer(text) if m.end() > first), None)
                    span = (start + sentence.start(), start + sentence.end()) if sentence else (start, end)
                    return span, [label for label, _ in alternative]
        return None


def content_words(question: str, tokenize: Callable[[str], list[str]]) -> list[str]:
    return [w for w in tokenize(item_content(question)) if w not in SCAFFOLD and len(w) >= 2]
