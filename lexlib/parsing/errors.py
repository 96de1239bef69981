"""Errors raised by the corpus parsers.

Imports are all-or-nothing: a parser collects every problem it can find and
raises one ImportValidationError, so the admin fixes the whole file in one go
instead of discovering errors one upload at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

# A report of a million broken lines helps nobody and could exhaust memory.
MAX_REPORTED_ERRORS = 200

# Line 0 stands for the document as a whole (e.g. "no article found").
WHOLE_DOCUMENT = 0


@dataclass(frozen=True)
class LineError:
    line: int  # 1-based; WHOLE_DOCUMENT (0) when no single line is to blame
    reason: str

    def __str__(self) -> str:
        where = "document" if self.line == WHOLE_DOCUMENT else f"line {self.line}"
        return f"{where}: {self.reason}"


class ImportValidationError(ValueError):
    """The upload was rejected; `errors` says where and why (at most MAX_REPORTED_ERRORS)."""

    def __init__(self, errors: list[LineError], *, more: int = 0) -> None:
        self.errors: list[LineError] = list(errors)
        self.more: int = more  # errors found but left out of the report
        super().__init__(str(self))

    @property
    def total(self) -> int:
        return len(self.errors) + self.more

    def __str__(self) -> str:
        noun = "error" if self.total == 1 else "errors"
        lines = [f"import rejected, {self.total} {noun}:"]
        lines.extend(f"  {error}" for error in self.errors)
        if self.more:
            lines.append(f"  … and {self.more} more")
        return "\n".join(lines)


class ErrorCollector:
    """Accumulates LineErrors, keeping the first MAX_REPORTED_ERRORS and counting the rest."""

    def __init__(self, limit: int = MAX_REPORTED_ERRORS) -> None:
        self._limit = limit
        self._errors: list[LineError] = []
        self._more = 0

    def add(self, line: int, reason: str) -> None:
        if len(self._errors) < self._limit:
            self._errors.append(LineError(line, reason))
        else:
            self._more += 1

    def __bool__(self) -> bool:
        return bool(self._errors) or self._more > 0

    def __len__(self) -> int:
        return len(self._errors) + self._more

    @property
    def errors(self) -> list[LineError]:
        return sorted(self._errors, key=lambda e: e.line)

    @property
    def more(self) -> int:
        return self._more

    def extend(self, errors: list[LineError]) -> None:
        for error in errors:
            self.add(error.line, error.reason)

    def raise_if_any(self) -> None:
        if self:
            raise ImportValidationError(sorted(self._errors, key=lambda e: e.line), more=self._more)


class DocumentError(ImportValidationError):
    """An uploaded document was refused or could not be read.

    It is an ImportValidationError with one whole-document LineError, so an
    importer that reports ImportValidationError needs no extra case for it.
    The message is short and safe to show to the admin; `detail` may carry
    diagnostics (e.g. the tail of a parser's stderr) for the logs only.
    """

    def __init__(self, message: str, *, detail: str = "") -> None:
        self.message = message
        self.detail = detail
        super().__init__([LineError(WHOLE_DOCUMENT, message)])

    def __str__(self) -> str:
        return self.message
