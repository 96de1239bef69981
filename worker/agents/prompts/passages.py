"""The passage of a judicial interpretation that bears on a candidate article.

An interpretation paragraph stored in the corpus often speaks of several Criminal Law articles
(a money-laundering paragraph that also names article 177-1 is linked to article 177), and it
repeats its own heading ("…解释第六条　第六条 …"). A prompt shows it once and only the part about
the articles it is shown for:

- the heading is not repeated;
- a paragraph that cites Criminal Law articles ("刑法第二百六十四条", "刑法分则…第三百九十八条至
  第四百一十九条") is kept if one of them is an article it is shown for, and left out otherwise;
- a paragraph that cites none ("前款", the definitions that follow) goes with the paragraph
  before it, and the enumerated lines of a list ("（一）…", "１、…") with the line that opens it;
- where paragraphs were left out, "……" says so.

If every paragraph is left out the interpretation does not bear on those articles at all
(``None``). Text whose references cannot be read is kept whole: leaving material out is only
done on evidence that it is about something else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from worker.agents.numerals import ARTICLE_RE, chinese_to_int

GAP = "……"
# The heading the corpus repeats: "<source>第六条　第六条 <text>".
_HEADING_RE = re.compile(r"^(?P<head>[^　\n]*?(?P<para>第[^　\n条]{1,8}条))　(?P=para)[ 　]*")
_LIST_LINE_RE = re.compile(r"^[ 　]*(?:[（(][一二三四五六七八九十]+[）)]|[0-9０-９]+[、.．])")
# Articles of the interpretation itself or of another instrument, not of the Criminal Law.
_OWN_ARTICLE_PREFIXES = ("解释", "规定", "办法", "意见", "通知", "纪要", "本条", "本款")
_RANGE_LINK = ("至", "到")


def article_ref(key: str) -> tuple[int, int] | None:
    """"264" -> (264, 0), "133-1" -> (133, 1); None for a key that is not an article number."""
    number, _, sub = str(key).partition("-")
    if not number.isdigit() or (sub and not sub.isdigit()):
        return None
    return int(number), int(sub or 0)


def _criminal_law_refs(paragraph: str) -> list[tuple[int, int, int]]:
    """The Criminal Law articles a paragraph cites, as (number, sub, up_to) ranges (up_to = number
    unless "第…条至第…条"). Only mentions after "刑法" in the same paragraph count."""
    law_at = paragraph.find("刑法")
    if law_at < 0:
        return []
    out: list[tuple[int, int, int]] = []
    matches = [m for m in ARTICLE_RE.finditer(paragraph) if m.start() > law_at]
    skip_next = False
    for n, m in enumerate(matches):
        if skip_next:
            skip_next = False
            continue
        before = paragraph[:m.start()].rstrip("》")
        if before.endswith(_OWN_ARTICLE_PREFIXES) or (before.endswith("法") and not before.endswith("刑法")):
            continue
        try:
            number = chinese_to_int(m.group(1))
            sub = chinese_to_int(m.group(2)) if m.group(2) else 0
        except ValueError:
            continue
        up_to = number
        following = matches[n + 1] if n + 1 < len(matches) else None
        if following and not m.group(2) and paragraph[m.end():following.start()] in _RANGE_LINK:
            try:
                up_to = max(number, chinese_to_int(following.group(1)))
                skip_next = True
            except ValueError:
                pass
        out.append((number, sub, up_to))
    return out


def _bears_on(refs: list[tuple[int, int, int]], wanted: set[tuple[int, int]]) -> bool:
    for number, sub, up_to in refs:
        if (number, sub) in wanted or (up_to > number and any(number <= n <= up_to for n, _ in wanted)):
            return True
    return False


def interpretation_passage(text: str, articles: Iterable[tuple[int, int]]) -> str | None:
    """``text`` cut to what bears on ``articles`` ((number, sub) pairs); see the module doc.
    The source before the first "　" (how the pipeline joins source, paragraph and text) is always
    kept. No article given: the text without its repeated heading."""
    wanted = set(articles)
    heading = _HEADING_RE.match(text)
    if heading:
        text = heading.group("head") + "　" + text[heading.end():]
    if not wanted:
        return text
    head, sep, body = text.partition("　") if "　" in text.split("\n", 1)[0] else ("", "", text)
    kept: list[str] = []
    keep = True  # the fate of the paragraph that opens a list or a run of paragraphs without references
    gap = False
    for line in body.split("\n"):
        if not _LIST_LINE_RE.match(line):
            refs = _criminal_law_refs(line)
            if refs:
                keep = _bears_on(refs, wanted)
        if keep:
            if gap:
                kept.append(GAP)
            kept.append(line)
            gap = False
        else:
            gap = True
    if not kept:
        return None
    if gap:
        kept.append(GAP)
    return head + sep + "\n".join(kept)
