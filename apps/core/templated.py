"""Recognising text that code wrote from a %(name)s template, to show it again in the page language.

Some messages are stored or reported in English (an import's refused lines, a health check's detail) and
translated only when a page shows them: the English template is the msgid, and the same template, read as
a regular expression whose named groups capture the values, recognises a stored message.
"""

import re

from django.utils.translation import gettext

PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def template_pattern(template: str, groups: dict[str, str] | None = None) -> re.Pattern[str]:
    """A pattern matching text written from ``template``: its literal parts as they are, each placeholder a named
    group (``groups`` may say what a placeholder can stand for; any text, as little as fits, otherwise)."""
    parts = PLACEHOLDER.split(template)  # literal, name, literal, name, …, literal
    return re.compile("".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>{(groups or {}).get(part, '.+?')})"
                              for index, part in enumerate(parts)))


def patterns_of(templates) -> list[tuple[re.Pattern[str], str]]:
    """Each template (an English msgid) with the pattern recognising text written from it."""
    return [(template_pattern(text), text) for text in templates]


def translated(text: str, patterns: list[tuple[re.Pattern[str], str]]) -> str:
    """``text`` in the active language when one of ``patterns`` (``patterns_of``) recognises the whole of it, its
    values kept; else ``text`` as it came."""
    for pattern, template in patterns:
        if match := pattern.fullmatch(text):
            return gettext(template) % match.groupdict()
    return text
