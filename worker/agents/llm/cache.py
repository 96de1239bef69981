"""Replies cached by a content hash of everything that determines them (a replay calls no model)."""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from worker.agents.llm.errors import JSONParseError
from worker.agents.llm.jsonparse import parse_json_strict

log = logging.getLogger(__name__)
_HEX64_RE = re.compile(r"^[0-9a-f]{64}$")

class ResponseCache:
    """Stored replies keyed by request hash (64 lowercase hex digits)."""

    def get(self, key: str) -> dict | None:
        raise NotImplementedError

    def put(self, key: str, entry: dict) -> None:
        raise NotImplementedError


def _check_key(key: str) -> str:
    if not isinstance(key, str) or not _HEX64_RE.match(key):
        raise ValueError("cache keys are sha256 hex digests")
    return key


class MemoryResponseCache(ResponseCache):
    """In-process LRU cache; thread-safe."""

    def __init__(self, max_entries: int = 10_000):
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, dict] = OrderedDict()

    def get(self, key: str) -> dict | None:
        _check_key(key)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return json.loads(json.dumps(entry))  # a copy the caller may not corrupt

    def put(self, key: str, entry: dict) -> None:
        _check_key(key)
        copy = json.loads(json.dumps(entry))
        with self._lock:
            self._entries[key] = copy
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


class DirectoryResponseCache(ResponseCache):
    """One JSON file per reply under ``root/<key[:2]>/<key>.json``.

    Writes are atomic (temporary file + rename), so a crash never leaves a
    half-written entry; an unreadable or corrupt file reads as a miss.  The
    directory of a judgment run is part of its evidence bundle: replaying the
    bundle with this cache (and ``replay=True`` on the client) calls no model.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        _check_key(key)
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            entry = parse_json_strict(data.decode("utf-8"))
        except (UnicodeDecodeError, JSONParseError):
            log.warning("corrupt LLM cache entry %s ignored", path.name)
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False, sort_keys=True, indent=1).encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("??/*.json") if _HEX64_RE.match(p.stem))
