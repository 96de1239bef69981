"""The focus stage: the part of the facts that concerns one defendant (the statistical strategy's; the LLM
strategy asks the model, worker/agents/strategies/llm.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

SENTENCE_RE = re.compile(r"[^。；;！？!?]+[。；;！？!?]?")


def focus_facts(fact: str, defendant: str | None, all_defendants: Sequence[str]) -> str:
    """The sentences of ``fact`` that concern ``defendant``.

    Keeps sentences naming this defendant and sentences naming no defendant
    (shared context); drops sentences that only name others, and those whose
    subject is another defendant naming this one only as the source of what it
    received (``_named_by_other``). Falls back to the whole fact when nothing is
    left or no defendant is given.
    """
    if not defendant or len(all_defendants) < 2:
        return fact
    others = [d for d in all_defendants if d and d != defendant and d not in defendant]
    kept = []
    for sentence in SENTENCE_RE.findall(fact):
        names_self = defendant in sentence
        names_other = any(o in sentence for o in others)
        if names_self and names_other and _named_by_other(sentence, defendant, others):
            continue
        if names_self or not names_other:
            kept.append(sentence)
    focused = "".join(kept).strip()
    return focused or fact


# A defendant named as the source of what another handled: "明知系孙某盗窃所得" (系, 是 or 为, his name, his act, then 所得).
PROCEEDS_BEFORE = ("系", "是", "为")
PROCEEDS_OF = "[^，。；：、]{0,8}?所得"
SUBJECT_MARK = "被告人"


def _named_by_other(sentence: str, defendant: str, others: Sequence[str]) -> bool:
    """Whether another defendant is the sentence's subject ("被告人周某…", the first defendant it names) and this one is
    named only as the source of the proceeds that subject handled: "被告人周某明知系孙某盗窃所得，仍予以收购" tells 周某's
    act (receiving), not 孙某's; 孙某's theft is told where he is the subject."""
    subject = min(((sentence.find(o), o) for o in others if o in sentence), default=None)
    if subject is None or subject[0] > sentence.find(defendant) or not sentence[:subject[0]].endswith(SUBJECT_MARK):
        return False
    return all(sentence[:m.start()].endswith(PROCEEDS_BEFORE) and re.match(PROCEEDS_OF, sentence[m.end():])
               for m in re.finditer(re.escape(defendant), sentence))


# Where the facts pass to another act: "另查明", an enumeration ("一、", "（二）", "3、"), "第二起"; not an item of a
# statute cited ("第一百三十三条第（五）项").
PART_MARK = re.compile(r"另查明|还查明|此外，|(?<![0-9])[一二三四五六七八九十][、．]|（[一二三四五六七八九十]）(?![项款])"
                       r"|(?<![0-9.])[1-9][、．](?![0-9])|第[一二三四五六七八九十]起")
PART_MIN_CHARS = 30  # shorter pieces are headings or list items of one act ("1、被告人供述")
# A part that lists evidence or the prosecution's conclusion, not an act ("1、被告人某某的供述证实，…",
# "（四）被告人供述和辩解等证据证实。公诉机关认为…").
NOT_AN_ACT = re.compile(r"^.{0,30}?(?:供述|证言|陈述|证实|笔录|鉴定意见|书证|证据|公诉机关认为|之规定)")


def separate_parts(fact: str) -> list[str]:
    """The parts of ``fact`` its own marks set apart that state an act, each at least PART_MIN_CHARS long; one part
    (the whole facts, stripped) when there are not two such parts."""
    cuts = [m.start() for m in PART_MARK.finditer(fact)]
    parts = [fact[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(fact)])]
    parts = [p for p in parts if len(p) >= PART_MIN_CHARS and not NOT_AN_ACT.search(p)]
    return parts if len(parts) >= 2 else [fact.strip()]
