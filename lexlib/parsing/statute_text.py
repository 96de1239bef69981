"""Split the plain text of a statute into articles.

Input is what an admin pastes or what documents.extract_text returns: headings
"第二编 分则", "第五章 侵犯财产罪", "第一节 …", and articles that start a line with
"第二百六十六条　诈骗公私财物…" (full-width space, normal space, or none).
Articles cite each other ("依照前款或者第二百六十四条的规定"), so only a 第…条 at
the start of a line can open an article, and even there "第六十七条第三款规定…"
is a wrapped reference, not a heading.
"""

from __future__ import annotations

import re
from typing import Any

from worker.agents.numerals import NUMERAL_CHARS, article_key, article_label, chinese_to_int

from .errors import WHOLE_DOCUMENT, ErrorCollector

_N = f"[{NUMERAL_CHARS}]+"
_ARTICLE_START_RE = re.compile(rf"第({_N})条(?:之({_N}))?")
_HEADING_START_RE = re.compile(rf"第({_N})(编|章|节)")
_LEVELS = {"编": "part", "章": "chapter", "节": "section"}

# A character right after "第…条" that makes it a citation, not an article heading:
# "第六十七条第三款", "第二条的规定", "第一百条、第一百零一条", "第五条之规定" …
# (Not 中: "第二条中华人民共和国…" without a space is a real heading.)
_REFERENCE_FOLLOWERS = frozenset("的规第、，,。；;：:之至和或及与款项")
# A line ending like this closes a paragraph (款/项); anything else is a line wrap
# (PDFs and narrow editors break lines mid-sentence) and Chinese joins without spaces.
_PARAGRAPH_END = tuple("。；;：:！？!?”」』）)")
# Enumerated items "（一）", "(二)", "三、" always start a new line.
_ITEM_START_RE = re.compile(rf"^(?:[（(]{_N}[）)]|{_N}、)")
_HEADING_MAX_CHARS = 40


def split_statute_text(text: str) -> list[dict[str, Any]]:
    """Articles of a statute text as dicts: number, sub, key, label, text, part, chapter, section.

    Raises ImportValidationError (with line numbers) when no article is found,
    an article number repeats or goes backwards, an article has no text, or a
    heading's numeral cannot be read.
    """
    return [article for _, article in statute_rows(text)]


def statute_rows(text: str) -> list[tuple[int, dict[str, Any]]]:
    """Like split_statute_text, paired with each article's line number (ready for validate_records)."""
    splitter = _Splitter()
    for index, line in enumerate(_lines(text)):
        splitter.feed(index + 1, line)
    return splitter.finish()


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class _Splitter:
    """Line-by-line state machine: current headings and the article being collected."""

    def __init__(self) -> None:
        self.errors = ErrorCollector()
        self.headings: dict[str, str | None] = {"part": None, "chapter": None, "section": None}
        self.seen_part = False
        self.articles: list[tuple[int, dict[str, Any]]] = []
        self.first_line: dict[tuple[int, int], int] = {}
        self.highest: tuple[int, int] | None = None
        self.current: dict[str, Any] | None = None
        self.current_line = 0
        self.paragraphs: list[str] = []
        self.paragraph_open = False  # the last paragraph may continue on the next line

    def feed(self, line_no: int, raw: str) -> None:
        line = raw.strip()
        if not line:
            self.paragraph_open = False
            return
        if self._heading(line_no, line) or self._article(line_no, line):
            return
        if self.current is not None:
            self._append(line)
        # Text before the first article (title, preamble, table of contents) is ignored.

    def finish(self) -> list[tuple[int, dict[str, Any]]]:
        self._close()
        if not self.articles and not self.errors:
            self.errors.add(WHOLE_DOCUMENT, "no article (第…条) found")
        self.errors.raise_if_any()
        return self.articles

    # -- headings ---------------------------------------------------------------

    def _heading(self, line_no: int, line: str) -> bool:
        compact = re.sub(r"\s+", "", line)
        if compact == "附则":
            # The Criminal Law's 附则 is a part of its own; in other laws it is a chapter.
            self._set_heading("part" if self.seen_part else "chapter", "附则")
            return True
        match = _HEADING_START_RE.match(line)
        if not match:
            return False
        rest = line[match.end():]
        if not _looks_like_title(rest):
            return False
        try:
            chinese_to_int(match.group(1))
        except ValueError:
            self.errors.add(line_no, f"cannot read the number in heading {match.group()!r}")
            return True
        title = re.sub(r"\s+", "", rest)
        self._set_heading(_LEVELS[match.group(2)], f"{match.group()} {title}" if title else match.group())
        return True

    def _set_heading(self, level: str, value: str) -> None:
        self._close()  # an article ends where a new heading begins
        if level == "part":
            self.seen_part = True
            self.headings = {"part": value, "chapter": None, "section": None}
        elif level == "chapter":
            self.headings = {**self.headings, "chapter": value, "section": None}
        else:
            self.headings = {**self.headings, "section": value}

    # -- articles --------------------------------------------------------------------

    def _article(self, line_no: int, line: str) -> bool:
        match = _ARTICLE_START_RE.match(line)
        if not match:
            return False
        rest = line[match.end():]
        if rest and not rest[0].isspace() and rest[0] in _REFERENCE_FOLLOWERS:
            return False  # a citation that happens to start a wrapped line
        try:
            number = chinese_to_int(match.group(1))
            sub = chinese_to_int(match.group(2)) if match.group(2) else 0
            key = article_key(number, sub)
            if match.group(2) and sub == 0:
                raise ValueError("之零")
        except ValueError:
            self.errors.add(line_no, f"cannot read the article number in {match.group()!r}")
            self._close()
            return True
        self._close()
        label = article_label(number, sub)
        if (number, sub) in self.first_line:
            self.errors.add(line_no, f"duplicate article {label} (first on line {self.first_line[(number, sub)]})")
        elif self.highest is not None and (number, sub) < self.highest:
            previous = article_label(*self.highest)
            self.errors.add(line_no, f"article {label} comes after {previous}: article numbers must increase")
        else:
            self.first_line[(number, sub)] = line_no
            self.highest = (number, sub)
            self.current = {"number": number, "sub": sub, "key": key, "label": label, **self.headings}
            self.current_line = line_no
            first = rest.strip()
            if first:
                self._append(first)
            return True
        return True

    def _append(self, line: str) -> None:
        if self.paragraphs and self.paragraph_open and not _ITEM_START_RE.match(line):
            self.paragraphs[-1] += line
        else:
            self.paragraphs.append(line)
        self.paragraph_open = not line.endswith(_PARAGRAPH_END)

    def _close(self) -> None:
        if self.current is None:
            return
        text = "\n".join(self.paragraphs)
        if text:
            # Key order as in statutes.jsonl: number, sub, key, label, text, part, chapter, section.
            article = {k: self.current[k] for k in ("number", "sub", "key", "label")}
            article["text"] = text
            article.update({k: self.current[k] for k in ("part", "chapter", "section")})
            self.articles.append((self.current_line, article))
        else:
            self.errors.add(self.current_line, f"article {self.current['label']} has no text")
        self.current = None
        self.paragraphs = []
        self.paragraph_open = False


def _looks_like_title(rest: str) -> bool:
    """After "第五章": a short title ("侵犯财产罪"), not a sentence ("规定的…，…")."""
    if not rest or rest[0].isspace():
        return True
    if rest[0] in _REFERENCE_FOLLOWERS:
        return False
    return len(rest) <= _HEADING_MAX_CHARS and not any(mark in rest for mark in "。，；,;")


def looks_like_statute(text: str) -> bool:
    """At least one line opens an article (第…条) and nothing says 判决如下."""
    if "判决如下" in text:
        return False
    for line in _lines(text):
        match = _ARTICLE_START_RE.match(line.strip())
        if match:
            rest = line.strip()[match.end():]
            if not rest or rest[0].isspace() or rest[0] not in _REFERENCE_FOLLOWERS:
                return True
    return False


_DATE_RE = re.compile(rf"({_N})年({_N})月({_N})日")
_EFFECTIVE_RE = re.compile(rf"自({_N}年{_N}月{_N}日)起(?:施行|生效)")


def parse_chinese_date(text: str):
    """二〇二一年三月一日 or 2021年3月1日 -> date; ValueError when it is not a real date."""
    import datetime as dt

    match = _DATE_RE.fullmatch(text.strip())
    if not match:
        raise ValueError(f"not a date: {text!r}")
    year, month, day = (chinese_to_int(g) for g in match.groups())
    return dt.date(year, month, day)


def find_effective_date(text: str):
    """The date in "自…起施行" (an amendment's or a law's final clause), or None when there is none
    or several different ones (then the admin must say which applies)."""
    dates = set()
    for match in _EFFECTIVE_RE.finditer(text):
        try:
            dates.add(parse_chinese_date(match.group(1)))
        except ValueError:
            continue
    return dates.pop() if len(dates) == 1 else None
