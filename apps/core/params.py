"""Parsing numbers out of query strings and forms without letting a bad value reach the database.

``str.isdigit()`` also accepts digits such as "²" that ``int()`` refuses, and a valid number can
exceed PostgreSQL's bigint; either used to end as a server error.
"""

ID_MAX = 2**63 - 1


def int_param(value, default=None, *, maximum: int = ID_MAX):
    """A non-negative whole number in ASCII digits, at most ``maximum``; ``default`` otherwise."""
    text = str(value if value is not None else "").strip()
    if not text or not text.isascii() or not text.isdigit() or len(text) > 19:
        return default
    number = int(text)
    return number if number <= maximum else default
