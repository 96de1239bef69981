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


class Translations:
    """Messages written from these templates (each an English msgid, marked with gettext_noop where it is written
    so that makemessages keeps it), shown in the active language: calling it with a message gives the translation,
    its values kept, or the message as it came when no template recognises the whole of it."""

    def __init__(self, *templates: str):
        self.patterns = [(template_pattern(text), text) for text in templates]

    def __call__(self, text: str) -> str:
        for pattern, template in self.patterns:
            if match := pattern.fullmatch(text):
                return gettext(template) % match.groupdict()
        return text
