"""Recognising text that code wrote from a %(name)s template, to show it again in the page language.

Some messages are stored or reported in English (an import's refused lines, a health check's detail) and
translated only when a page shows them: the English template is the msgid, and the same template, read as
a regular expression whose named groups capture the values, recognises a stored message.
"""

import re
from dataclasses import dataclass

from django.utils.translation import gettext

PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def template_pattern(template: str, groups: dict[str, str] | None = None) -> re.Pattern[str]:
    """A pattern matching text written from ``template``: its literal parts as they are, each placeholder a named
    group (``groups`` may say what a placeholder can stand for; any text, as little as fits, otherwise)."""
    parts = PLACEHOLDER.split(template)  # literal, name, literal, name, …, literal
    return re.compile("".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>{(groups or {}).get(part, '.+?')})"
                              for index, part in enumerate(parts)))


@dataclass(frozen=True)
class Row:
    template: str  # the English message with %(name)s placeholders; the msgid of its translation
    pattern: re.Pattern[str]  # recognises a message written from it (template_pattern)


def rows_of(*templates: str, groups: dict[str, str] | None = None) -> tuple[Row, ...]:
    """One Row per template (each marked with gettext_noop where it is written, so that makemessages keeps it)."""
    return tuple(Row(text, template_pattern(text, groups)) for text in templates)


def first_match(text: str, rows: tuple[Row, ...]) -> tuple[Row, re.Match[str]] | None:
    """The first row recognising the whole of ``text``, with its match."""
    for row in rows:
        if match := row.pattern.fullmatch(text):
            return row, match
    return None


def fill(row: Row, match: re.Match[str], values: dict[str, str] | None = None) -> str:
    """The row's translation filled with the matched values (or ``values``); the message as it came when the
    translation does not fit them (a broken catalogue entry must not hide a right English message)."""
    try:
        return gettext(row.template) % (values if values is not None else match.groupdict())
    except (KeyError, ValueError, TypeError):
        return match.string


class Translations:
    """Messages written from these templates, shown in the active language: calling it with a message gives the
    translation, its values kept, or the message as it came when no template recognises the whole of it."""

    def __init__(self, *templates: str):
        self.rows = rows_of(*templates)

    def __call__(self, text: str) -> str:
        found = first_match(text, self.rows)
        return fill(*found) if found else text
