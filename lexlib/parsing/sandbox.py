"""Run a parser on untrusted bytes in a child process with hard resource limits.

PDF and DOCX parsers can be driven into huge allocations, endless loops or
crashes by a crafted file.  Running them in a separate Python process under
RLIMIT_AS / RLIMIT_CPU / RLIMIT_FSIZE plus a wall-clock timeout means the worst
a hostile upload can do is get itself reported as "unparseable"; the web or
worker process that asked stays healthy.

Protocol: the child gets the input bytes on stdin and writes one JSON object to
stdout: {"ok": true, "result": ...} or {"ok": false, "error": "..."}.
stdout and stderr are temporary files, so RLIMIT_FSIZE also bounds how much the
child can make the parent read back.

The limits are set by the child itself, first thing after interpreter start-up
and before it reads a byte of input, rather than in a preexec_fn: preexec_fn is
documented as unsafe when the parent has threads (runserver, gunicorn gthread,
Celery), where the forked child can deadlock before exec.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .errors import DocumentError

logger = logging.getLogger(__name__)

DEFAULT_MEM_MB = 512
DEFAULT_CPU_S = 10
DEFAULT_WALL_S = 20
DEFAULT_OUT_MB = 64
_MAX_OPEN_FILES = 64
_STDERR_TAIL = 2000
_MB = 1024 * 1024

# The directory that contains the `lexlib` and `apps` packages: the child imports targets from it.
_PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
_FUNC_PATH_RE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")

_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from lexlib.parsing.sandbox import _child_main; _child_main(sys.argv[2:])"
)


def run_limited(
    func_path: str,
    arg_bytes: bytes,
    *,
    mem_mb: int = DEFAULT_MEM_MB,
    cpu_s: int = DEFAULT_CPU_S,
    wall_s: float = DEFAULT_WALL_S,
    out_mb: int = DEFAULT_OUT_MB,
) -> Any:
    """Call `module.path:function`(arg_bytes) in a limited child and return its JSON result.

    Any failure of the child (exception, limit hit, crash, garbage output)
    becomes DocumentError("unparseable: <reason>"); nothing else escapes.
    """
    if not _FUNC_PATH_RE.fullmatch(func_path):
        raise ValueError(f"func_path must look like 'package.module:function', got {func_path!r}")
    # -I: isolated mode (ignores PYTHON* variables, user site-packages and the cwd);
    # -B: never write .pyc files, which RLIMIT_FSIZE would turn into failures.
    command = [
        sys.executable, "-I", "-B", "-c", _BOOTSTRAP, _PROJECT_ROOT,
        func_path, str(mem_mb), str(cpu_s), str(out_mb),
    ]  # fmt: skip
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=out, stderr=err, cwd=_PROJECT_ROOT,
                env=_child_env(), close_fds=True, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise DocumentError("unparseable: the parser process could not be started", detail=str(exc)) from None
        try:
            proc.communicate(bytes(arg_bytes), timeout=wall_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise DocumentError(f"unparseable: the parser exceeded the wall-clock limit of {wall_s:g} s") from None
        except BaseException:
            # Never leave a hostile parser running behind us (e.g. on KeyboardInterrupt).
            proc.kill()
            proc.wait()
            raise
        stderr_tail = _tail(err)
        return _interpret(proc.returncode, out, stderr_tail, mem_mb=mem_mb, cpu_s=cpu_s, out_mb=out_mb)


def _child_env() -> dict[str, str]:
    # The child handles hostile input: it gets no secrets, database URLs or tokens.
    return {"PATH": os.defpath, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}


def _tail(stream: Any) -> str:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(max(0, size - _STDERR_TAIL))
    return stream.read().decode("utf-8", "replace")


def _interpret(returncode: int, out: Any, stderr_tail: str, *, mem_mb: int, cpu_s: int, out_mb: int) -> Any:
    """Turn the child's exit status and output into a result or a DocumentError with a clear reason."""
    out.seek(0, os.SEEK_END)
    size = out.tell()
    if size >= out_mb * _MB:
        raise DocumentError(f"unparseable: the parser output exceeded the limit of {out_mb} MB", detail=stderr_tail)
    if returncode < 0:
        reason = _signal_reason(-returncode, stderr_tail, mem_mb, cpu_s)
        raise DocumentError("unparseable: " + reason, detail=stderr_tail)
    out.seek(0)
    try:
        payload = json.loads(out.read().decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        payload = None
    if not isinstance(payload, dict) or "ok" not in payload:
        reason = _memory_hint(stderr_tail, mem_mb) or f"the parser exited with status {returncode} without a result"
        logger.warning("sandboxed parser failed: %s; stderr: %s", reason, stderr_tail)
        raise DocumentError("unparseable: " + reason, detail=stderr_tail)
    if not payload["ok"]:
        reason = _printable(str(payload.get("error") or "the parser failed"))
        raise DocumentError("unparseable: " + reason, detail=stderr_tail)
    return payload.get("result")


def _printable(text: str) -> str:
    """Parser messages may quote the hostile input: keep them storable (no NUL, no lone surrogates)."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _signal_reason(signum: int, stderr_tail: str, mem_mb: int, cpu_s: int) -> str:
    if signum == signal.SIGXCPU:
        return f"the parser exceeded the CPU limit of {cpu_s} s"
    if signum == signal.SIGKILL:
        # We only SIGKILL on the wall clock (reported earlier); otherwise it is the
        # hard CPU limit or the kernel's OOM killer.
        return f"the parser was killed (CPU limit {cpu_s} s or memory limit {mem_mb} MB)"
    if signum == signal.SIGXFSZ:
        return "the parser exceeded its output limit"
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    hint = _memory_hint(stderr_tail, mem_mb)
    return f"the parser crashed with {name}" + (f" ({hint})" if hint else "")


def _memory_hint(stderr_tail: str, mem_mb: int) -> str:
    if "MemoryError" in stderr_tail or "Cannot allocate memory" in stderr_tail or "out of memory" in stderr_tail:
        return f"memory limit of {mem_mb} MB exceeded"
    return ""


# --- child side -----------------------------------------------------------------------


def _child_main(argv: list[str]) -> None:
    """Entry point of the child process (see _BOOTSTRAP)."""
    func_path, mem_mb, cpu_s, out_mb = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    _apply_limits(mem_mb=mem_mb, cpu_s=cpu_s, out_mb=out_mb)
    data = sys.stdin.buffer.read()
    result_stream = sys.stdout.buffer
    sys.stdout = sys.stderr  # a library that prints must not corrupt the JSON result
    payload = _call(func_path, data, mem_mb)
    del data
    # ensure_ascii: parsers may return lone surrogates, which cannot be encoded as UTF-8.
    encoded = json.dumps(payload, ensure_ascii=True).encode("ascii")
    try:
        result_stream.write(encoded)
        result_stream.flush()
    except OSError:
        # EFBIG from RLIMIT_FSIZE (Python ignores SIGXFSZ); the parent sees the size.
        os._exit(3)


def _apply_limits(*, mem_mb: int, cpu_s: int, out_mb: int) -> None:
    _lower(resource.RLIMIT_AS, mem_mb * _MB, mem_mb * _MB)
    # Soft limit sends SIGXCPU; the hard limit one second later is SIGKILL as a backstop.
    _lower(resource.RLIMIT_CPU, cpu_s, cpu_s + 1)
    _lower(resource.RLIMIT_FSIZE, out_mb * _MB, out_mb * _MB)
    _lower(resource.RLIMIT_CORE, 0, 0)
    _lower(resource.RLIMIT_NOFILE, _MAX_OPEN_FILES, _MAX_OPEN_FILES)


def _lower(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above what the parent already had (raising a hard limit fails)."""
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(which, (soft, hard))


def _call(func_path: str, data: bytes, mem_mb: int) -> dict[str, Any]:
    error: str
    try:
        module_name, func_name = func_path.split(":")
        func = getattr(importlib.import_module(module_name), func_name)
        return {"ok": True, "result": func(data)}
    except MemoryError:
        error = f"memory limit of {mem_mb} MB exceeded"
    except RecursionError:
        error = "nesting too deep (recursion limit)"
    except Exception as exc:  # noqa: BLE001 - every parser failure becomes a reason for the admin
        error = _describe(exc)
    return {"ok": False, "error": error}


def _describe(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text[:300]
