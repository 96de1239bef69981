"""Typed readers for environment variables.

Every reader fails loudly, naming the variable, so a typo in a deployment's
environment stops start-up instead of silently falling back to a default.
A secret may also be given as ``NAME_FILE`` pointing at a file that holds it.
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_MISSING = object()
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str, default):
    file_var = f"{name}_FILE"
    if os.environ.get(file_var):
        path = Path(os.environ[file_var])
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{file_var}: cannot read {path}: {exc.strerror}") from exc
    if name in os.environ:
        return os.environ[name]
    if default is _MISSING:
        raise ImproperlyConfigured(f"environment variable {name} is required but not set")
    return default


def env_str(name: str, default=_MISSING) -> str:
    return _raw(name, default)


def env_bool(name: str, default=_MISSING) -> bool:
    value = _raw(name, default)
    if isinstance(value, bool):
        return value
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"environment variable {name} must be a boolean (1/0, true/false), got {value!r}")


def env_int(name: str, default=_MISSING, *, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _raw(name, default)
    if isinstance(value, int):
        number = value
    else:
        try:
            number = int(value.strip())
        except ValueError:
            raise ImproperlyConfigured(f"environment variable {name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"environment variable {name} must be >= {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"environment variable {name} must be <= {maximum}, got {number}")
    return number


def env_float(name: str, default=_MISSING) -> float:
    value = _raw(name, default)
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value.strip())
    except ValueError:
        raise ImproperlyConfigured(f"environment variable {name} must be a number, got {value!r}") from None


def env_list(name: str, default=_MISSING) -> list[str]:
    value = _raw(name, default)
    if isinstance(value, list):
        return value
    return [item.strip() for item in value.split(",") if item.strip()]
