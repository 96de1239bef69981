"""Chinese legal tokenizer on jieba.

jieba's general dictionary splits legal elements (他人财物 -> 他/人财物), so every
index and every query in Lextrace goes through :class:`Tokenizer`, which owns a
private ``jieba.Tokenizer`` loaded with ``legal_dict.txt`` and any words added at
run time (e.g. every charge name from the database).

Indexes must be queried with a tokenizer of the same :meth:`Tokenizer.fingerprint`:
adding words changes jieba's segmentation (its word probabilities are relative
to the total frequency), so the fingerprint belongs in every index's metadata.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

import jieba

LEGAL_DICT_PATH = Path(__file__).with_name("legal_dict.txt")

# Frequency given to every user word. A fixed value (rather than jieba's
# suggest_freq, which depends on what was added before) keeps the result
# independent of the order in which words are added. 1000 is well above what a
# split into two dictionary words scores, so terms stay whole inside sentences.
USER_WORD_FREQ = 1000

# Bump when the token rules below change: it is part of the fingerprint.
TOKENIZER_VERSION = "2"

# Function words, plus the date/time fragments left once digits are dropped
# (2016年3月28日20时许 -> 年 月 日 时许): they occur in nearly every fact and
# carry nothing. Negations (不, 未, 没有) and legal quantifiers (以上, 以下,
# 多次) carry meaning in criminal law and are deliberately kept.
STOPWORDS: frozenset[str] = frozenset(
    """
    的 地 得 之 了 着 过 在 是 和 与 及 以及 或 或者 而 并 并且 且 又 也 都 就 才 还
    将 把 被 对 于 从 向 为 以 其 该 此 这 那 这些 那些 这个 那个 即 则 但 但是
    因 因为 所以 由于 如 若 如果 等 等等 之后 时 中 个 一个 我 你 他 她 它 我们
    你们 他们 她们 自己 吗 呢 吧 啊 呀 哦 嗯 么 所 遂 后 至 到 给 让 使 据 经
    年 月 日 分 许 时许
    """.split()
)

# Characters jieba keeps inside one token (it splits everything else before the
# dictionary is consulted); mirrors jieba's own re_han_default.
_JIEBA_WORD_CHARS = re.compile(r"[\u4E00-\u9FD5a-zA-Z0-9+#&._%\-]+")

logger = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    """Where jieba's prefix-dictionary cache goes.

    jieba writes ``jieba.cache`` (a marshal file it loads back) into the system
    temp dir by default, shared by every user of the machine; a private,
    project-owned directory avoids loading a file someone else planted there.
    """
    env = os.environ.get("LEXTRACE_JIEBA_CACHE_DIR")
    if env:
        return Path(env)
    repo_local = Path(__file__).resolve().parents[2] / ".local" / "cache" / "jieba"
    try:
        repo_local.mkdir(parents=True, exist_ok=True)
        if os.access(repo_local, os.W_OK):
            return repo_local
    except OSError:
        pass
    # Read-only checkout (e.g. a container image): a per-user temp directory.
    return Path(tempfile.gettempdir()) / f"lextrace-jieba-{os.getuid()}"


_base_lock = threading.Lock()
_base: tuple[dict[str, int], int] | None = None


def _base_dictionary(cache_dir: Path) -> tuple[dict[str, int], int]:
    """jieba's general prefix dictionary, loaded once per process.

    Loading it takes about 1.2 s (a 9 MB marshal cache); copying the loaded
    dict for each new Tokenizer takes a few tens of milliseconds.
    """
    global _base
    with _base_lock:
        if _base is None:
            # jieba logs "Building prefix dict ..." at DEBUG on every load.
            jieba.setLogLevel(logging.WARNING)
            loader = jieba.Tokenizer()
            cache_dir.mkdir(parents=True, exist_ok=True)
            loader.tmp_dir = str(cache_dir)
            loader.initialize()
            _base = (loader.FREQ, loader.total)
        return _base


def read_dict_file(path: Path) -> list[tuple[str, int | None]]:
    """Parse a user dictionary: ``word [freq]`` per line, ``#`` comments allowed."""
    entries: list[tuple[str, int | None]] = []
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
            raise ValueError(f"{path}:{lineno}: expected 'word [freq]', got {raw!r}")
        entries.append((parts[0], int(parts[1]) if len(parts) == 2 else None))
    return entries


def _is_noise(token: str) -> bool:
    """Whitespace, punctuation, symbols (incl. the CAIL mask ×) or a pure number."""
    if token.isdigit():
        return True
    return all(unicodedata.category(ch)[0] in "PSZC" for ch in token)


def jieba_parts(word: str) -> list[str]:
    """The pieces of ``word`` jieba can ever emit as tokens.

    jieba cuts at punctuation before looking words up, so a charge name such as
    掩饰、隐瞒犯罪所得罪 can never be one token; its pieces can.
    """
    return _JIEBA_WORD_CHARS.findall(word)


RECENT_TEXTS = 2048  # texts whose tokens a Tokenizer keeps: the facts of a judgment, the article texts and checklist items every judgment reads (bounded memory)


class Tokenizer:
    """jieba precise-mode tokenizer with a legal dictionary and stopword filtering.

    Thread-safe: the jieba instance is built lazily under a lock, and word
    additions hold the same lock. Segmentation itself only reads jieba's
    dictionary, which is safe under the GIL.
    """

    def __init__(
        self,
        user_dict: Path | None = LEGAL_DICT_PATH,
        extra_words: Iterable[str] = (),
        stopwords: Iterable[str] | None = None,
        hmm: bool = True,
        cache_dir: Path | None = None,
    ) -> None:
        self._user_dict = Path(user_dict) if user_dict is not None else None
        self._pending: list[str] = list(extra_words)
        self._stopwords = frozenset(stopwords) if stopwords is not None else STOPWORDS
        self._hmm = hmm
        self._cache_dir = cache_dir
        self._lock = threading.RLock()
        self._jieba: jieba.Tokenizer | None = None
        self._added: set[str] = set()
        # The last texts tokenized and their tokens: one judgment tokenizes the same focused facts for
        # several searches (BM25 of articles and cases, the dense query). Emptied when words are added.
        self._recent: OrderedDict[str, tuple[str, ...]] = OrderedDict()

    # -- set-up ---------------------------------------------------------------
    def _engine(self) -> jieba.Tokenizer:
        engine = self._jieba
        if engine is not None:
            return engine
        with self._lock:
            if self._jieba is None:
                self._jieba = self._build()
            return self._jieba

    def _build(self) -> jieba.Tokenizer:
        freq, total = _base_dictionary(self._cache_dir or default_cache_dir())
        engine = jieba.Tokenizer()
        # A private copy: add_word mutates FREQ/total, and other instances must
        # not see this instance's words. (jieba 0.42.1 attributes; version pinned.)
        engine.FREQ = dict(freq)
        engine.total = total
        engine.initialized = True
        if self._user_dict is not None:
            for word, word_freq in read_dict_file(self._user_dict):
                self._add_one(engine, word, word_freq)
        for word in sorted(set(self._pending)):
            self._add_one(engine, word, None)
        self._pending.clear()
        return engine

    def _add_one(self, engine: jieba.Tokenizer, word: str, freq: int | None) -> None:
        for part in jieba_parts(unicodedata.normalize("NFKC", word).lower()):
            # Single characters would only distort segmentation of everything else.
            if len(part) < 2 or part.isdigit() or part in self._added:
                continue
            self._added.add(part)
            engine.add_word(part, freq or max(USER_WORD_FREQ, engine.FREQ.get(part, 0)))

    def add_words(self, words: Iterable[str]) -> int:
        """Add words (e.g. all charge names) so they stay whole; returns how many pieces were new.

        Names containing punctuation are added piece by piece (see jieba_parts).
        Segmentation of other text can shift slightly (jieba's probabilities are
        relative to the total frequency), so add words before building indexes.
        """
        words = [w for w in words if w and w.strip()]
        engine = self._engine()
        with self._lock:
            before = len(self._added)
            for word in sorted(set(words)):
                self._add_one(engine, word, None)
            if len(self._added) != before:
                self._recent.clear()
            return len(self._added) - before

    # -- use ------------------------------------------------------------------
    def tokens(self, text: str) -> list[str]:
        """Precise-mode tokens without stopwords, punctuation, whitespace and numbers.

        NFKC folds full-width letters/digits (common in court documents) to
        ASCII so that ５００ and 500 agree; ASCII is lower-cased for the same reason.
        """
        if not text:
            return []
        if (known := self._recent.get(text)) is not None:
            return list(known)
        normalised = unicodedata.normalize("NFKC", text).lower()
        out: list[str] = []
        for token in self._engine().cut(normalised, HMM=self._hmm):
            token = token.strip()
            if token and token not in self._stopwords and not _is_noise(token):
                out.append(token)
        with self._lock:
            self._recent[text] = tuple(out)
            while len(self._recent) > RECENT_TEXTS:
                self._recent.popitem(last=False)
        return out

    def tokens_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokens(t) for t in texts]

    def __call__(self, text: str) -> list[str]:
        return self.tokens(text)

    def fingerprint(self) -> str:
        """Hash of everything that determines the output: rules, dictionary, added words."""
        self._engine()
        h = hashlib.sha256()
        h.update(f"v{TOKENIZER_VERSION};jieba{jieba.__version__};hmm={self._hmm}\n".encode())
        if self._user_dict is not None:  # explicit frequencies live only in the file
            h.update(self._user_dict.read_bytes())
        with self._lock:
            for word in sorted(self._added):
                h.update(word.encode("utf-8") + b"\n")
        h.update(b"--stop--\n")
        for word in sorted(self._stopwords):
            h.update(word.encode("utf-8") + b"\n")
        return h.hexdigest()[:16]


def legal_tokenizer_of(charge_names: Iterable[str]) -> Tokenizer:
    """The tokenizer the judgments use: the legal dictionary plus the corpus's charge names, kept whole.
    Serving (apps.corpus.search_service.legal_tokenizer, every Charge of the corpus) and retraining
    (training/statistical.py --charges, the same names exported) both build it here, so a model sees
    the tokens it was trained on; its artefact records the fingerprint."""
    tokenizer = Tokenizer()
    tokenizer.add_words(charge_names)
    return tokenizer


_default: Tokenizer | None = None
_default_lock = threading.Lock()


def default_tokenizer() -> Tokenizer:
    """A process-wide tokenizer with the legal dictionary (built on first use)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Tokenizer()
    return _default
