"""Keeps row data out of the logs: PostgreSQL error details quote the failing row or key, which
for a case is its facts. The filter rewrites a record's message and traceback text before any
handler formats it (LOGGING in legalsite/settings.py)."""

import logging
import re

# "DETAIL:  Failing row contains (...)", "Key (title)=(...) already exists." and the like.
_DETAIL = re.compile(r"(Failing row contains |Key \([^)]*\)=)\(.*?\)(?=[ .]|$)", re.MULTILINE | re.DOTALL)
_ANY_DETAIL = re.compile(r"^(DETAIL: ).*$", re.MULTILINE)
_PLAIN = logging.Formatter()


def redact(text: str) -> str:
    text = _DETAIL.sub(r"\1(…redacted…)", text)
    return _ANY_DETAIL.sub(r"\1…redacted…", text)


class RedactRowData(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and not record.exc_text:
            record.exc_text = _PLAIN.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True
