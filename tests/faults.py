"""Fault helpers of the reliability harness (RELIABILITY.md §3).

* ``WorkerProcess``: a real Celery worker (prefork) as its own process group, on any broker,
  database and queue, with extra environment (small limits for a test). ``kill_child(pid)``
  SIGKILLs one pool child (OOM-style), ``kill_group()`` the whole worker (host crash).
* ``ScratchRedis``: redis-server on a free 127.0.0.1 port with its own directory, with or
  without AOF; ``shutdown()`` (clean, persists), ``kill()`` (SIGKILL), ``start()`` again on
  the same port and directory.
* ``apps.core.backup.ScratchCluster``: a throwaway PostgreSQL cluster; ``stop("immediate")``.

Nothing here touches the development services (PostgreSQL 54329, Redis 63799): every
process is started by the test on a port of its own and stopped at its end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import redis

from apps.core.backup import PGROOT, free_port

ROOT = Path(__file__).resolve().parent.parent


def _redis_server() -> list[str]:
    found = shutil.which("redis-server")
    if found:
        return [found]
    if (PGROOT / "usr" / "bin" / "redis-server").exists():
        return ["chroot", str(PGROOT), "/usr/bin/redis-server"]
    raise RuntimeError("redis-server not found")


class ScratchRedis:
    def __init__(self, *, aof: bool = True):
        self.port = free_port()
        self.aof = aof
        tag = f"lextrace-redis-{uuid.uuid4().hex[:10]}"
        in_root = _redis_server()[0] == "chroot"
        self.host_dir = (PGROOT / "tmp" / tag) if in_root else Path(tempfile.gettempdir()) / tag
        self.inside = Path("/tmp") / tag if in_root else self.host_dir
        self.host_dir.mkdir(parents=True, mode=0o700)
        self.proc: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, socket_connect_timeout=2)

    def start(self) -> ScratchRedis:
        args = [*_redis_server(), "--port", str(self.port), "--bind", "127.0.0.1", "--protected-mode", "yes",
                "--dir", str(self.inside), "--save", "", "--daemonize", "no",
                "--logfile", str(self.inside / "redis.log")]
        args += ["--appendonly", "yes", "--appendfsync", "everysec"] if self.aof else ["--appendonly", "no"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    return self
            except redis.RedisError:
                time.sleep(0.1)
        raise RuntimeError(f"redis-server on {self.port} did not start")

    def shutdown(self) -> None:
        """A clean SHUTDOWN: with AOF on, everything acknowledged is on disk."""
        try:
            self.client().shutdown(nosave=not self.aof)
        except redis.ConnectionError:
            pass
        if self.proc is not None:
            self.proc.wait(timeout=20)
            self.proc = None

    def kill(self) -> None:
        """SIGKILL: no chance to write anything."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=20)
            self.proc = None

    def destroy(self) -> None:
        self.kill()
        shutil.rmtree(self.host_dir, ignore_errors=True)

    def __enter__(self) -> ScratchRedis:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.destroy()


class WorkerProcess:
    """A Celery worker started by the test (its own process group), consuming ``queues``."""

    def __init__(self, *, broker_url: str, db_name: str, queues: str = "default", concurrency: int = 1,
                 env: dict | None = None, log: Path | None = None):
        self.broker_url = broker_url
        self.name = f"chaos-{uuid.uuid4().hex[:8]}@localhost"
        self.env = dict(os.environ, DB_NAME=db_name, REDIS_URL=broker_url, CELERY_BROKER_URL=broker_url,
                        DJANGO_SETTINGS_MODULE="legalsite.settings_test", **(env or {}))
        self.queues = queues
        self.concurrency = concurrency
        self.log_path = log or (ROOT / "test-artifacts" / f"{self.name.split('@')[0]}.log")
        self.proc: subprocess.Popen | None = None

    def start(self, *, timeout: float = 90) -> WorkerProcess:
        self.log_path.parent.mkdir(exist_ok=True)
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "worker.celery:app", "worker", "--pool", "prefork",
             "--concurrency", str(self.concurrency), "--queues", self.queues, "--loglevel", "INFO",
             "--hostname", self.name, "--without-mingle", "--without-gossip"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"celery worker exited with {self.proc.returncode}; see {self.log_path}")
            if "ready." in self.log_path.read_text(errors="replace"):
                return self
            time.sleep(0.3)
        self.kill_group()
        raise RuntimeError(f"celery worker not ready within {timeout} s; see {self.log_path}")

    @staticmethod
    def kill_child(pid: int) -> None:
        os.kill(pid, signal.SIGKILL)

    def kill_group(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
            self.proc = None

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill_group()
        except ProcessLookupError:
            pass
        self.proc = None

    def __enter__(self) -> WorkerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class Gunicorn:
    """gunicorn (2 workers x 4 threads) on a free 127.0.0.1 port, its own process group."""

    def __init__(self, env: dict):
        self.port = free_port()
        self.env = dict(os.environ, DJANGO_SETTINGS_MODULE="legalsite.settings_test", DJANGO_DEBUG="0",
                        DJANGO_ALLOWED_HOSTS="127.0.0.1", **env)
        self.log = ROOT / "test-artifacts" / "gunicorn-load.log"

    def __enter__(self):
        self.log.parent.mkdir(exist_ok=True)
        out = open(self.log, "w")  # noqa: SIM115 - handed to the child process
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "legalsite.wsgi", "--bind", f"127.0.0.1:{self.port}", "--workers", "2",
             "--threads", "4", "--timeout", "120"], cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
        out.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5)  # noqa: S310 - loopback
                return self
            except urllib.error.HTTPError:
                return self  # it answers (503 when no worker runs yet)
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"gunicorn exited; see {self.log}") from None
                time.sleep(0.3)
        raise RuntimeError(f"gunicorn did not answer within 60 s; see {self.log}")

    def __exit__(self, *exc):
        import signal

        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def session_db_name() -> str:
    """The database the test session really uses (what started processes must be pointed at)."""
    from django.db import connection

    return connection.settings_dict["NAME"]


def own_queue() -> str:
    """A queue name for a worker started by one test, so the suite's shared worker never takes its messages."""
    return f"ops-{uuid.uuid4().hex[:8]}"


def manage(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python manage.py ARGS`` in a fresh process (the test settings plus ``env``)."""
    full = dict(os.environ, DJANGO_SETTINGS_MODULE="legalsite.settings_test", **(env or {}))
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=full, capture_output=True, text=True,
                          timeout=timeout, check=False)
