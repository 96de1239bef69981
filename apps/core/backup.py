"""Logical backups (pg_dump -Fc), restores (pg_restore) and the restore drill (H2, H3, INV-12).

A backup is only as good as its last restore, so the drill restores the newest
dump into a *fresh* PostgreSQL cluster (initdb --data-checksums, 127.0.0.1 and
a free port, a random password), then checks it there with the application's
own code: migrations at head, the audit chain recomputed, the table row counts
equal to the source's, a stored judgment replayed to the same result, and
pg_amcheck clean. The scratch cluster is stopped and deleted afterwards.

The PostgreSQL client and server programs must be of the server's major
version. They are found, in this order: ``LEXTRACE_PG_BIN`` (a directory), the
Debian 13 root that scripts/services.sh runs PostgreSQL 17 from
(``.local/pgroot``, entered with chroot), /usr/lib/postgresql/17/bin, PATH.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from django.conf import settings

logger = logging.getLogger(__name__)

PG_MAJOR = 17
ROOT = Path(settings.BASE_DIR)
PGROOT = ROOT / ".local" / "pgroot"
_PG_BIN_IN = f"/usr/lib/postgresql/{PG_MAJOR}/bin"


class BackupError(Exception):
    pass


# --- finding the PostgreSQL programs -------------------------------------------------------


def _in_pgroot() -> bool:
    return not os.environ.get("LEXTRACE_PG_BIN") and not Path(_PG_BIN_IN).is_dir() and (PGROOT / _PG_BIN_IN[1:]).is_dir()


def pg_program(tool: str) -> list[str]:
    """The argv prefix that runs PostgreSQL's ``tool`` of the right major version."""
    if os.environ.get("LEXTRACE_PG_BIN"):
        return [str(Path(os.environ["LEXTRACE_PG_BIN"]) / tool)]
    if Path(_PG_BIN_IN).is_dir():
        return [f"{_PG_BIN_IN}/{tool}"]
    if _in_pgroot():
        if os.geteuid() != 0:
            raise BackupError(f"PostgreSQL {PG_MAJOR} lives in {PGROOT}; entering it needs root (or set LEXTRACE_PG_BIN)")
        return ["chroot", str(PGROOT), f"{_PG_BIN_IN}/{tool}"]
    found = shutil.which(tool)
    if not found:
        raise BackupError(f"{tool} (PostgreSQL {PG_MAJOR}) not found; set LEXTRACE_PG_BIN")
    return [found]


def _as_postgres(argv: list[str]) -> list[str]:
    """Run a server program (initdb, pg_ctl) as the postgres OS user when we are root."""
    if os.geteuid() != 0:
        return argv
    import shlex

    if argv[0] == "chroot":
        return ["chroot", argv[1], "su", "postgres", "-s", "/bin/sh", "-c", shlex.join(argv[2:])]
    return ["runuser", "-u", "postgres", "--", *argv]


def _run(argv: list[str], *, timeout: float = 600, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("stdout", subprocess.PIPE)
    result = subprocess.run(argv, timeout=timeout, env=env, stderr=subprocess.PIPE, check=False, **kwargs)
    if result.returncode != 0:
        err = result.stderr.decode("utf-8", "replace") if isinstance(result.stderr, bytes) else result.stderr
        raise BackupError(f"{Path(argv[2] if argv[0] == 'chroot' else argv[0]).name} failed ({result.returncode}): "
                          f"{(err or '').strip()[-2000:]}")
    return result


# --- connection targets -------------------------------------------------------------------


@dataclass
class Target:
    host: str
    port: int
    name: str
    user: str
    password: str = field(repr=False, default="")

    @classmethod
    def from_settings(cls, name: str | None = None) -> Target:
        db = settings.DATABASES["default"]
        return cls(host=db.get("HOST") or "127.0.0.1", port=int(db.get("PORT") or 5432), name=name or db["NAME"],
                   user=db["USER"], password=db.get("PASSWORD") or "")

    def args(self) -> list[str]:
        return ["-h", self.host, "-p", str(self.port), "-U", self.user]

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGPASSWORD"] = self.password
        env["PGCONNECT_TIMEOUT"] = "10"
        return env

    def connect(self, dbname: str | None = None, **kwargs) -> psycopg.Connection:
        return psycopg.connect(host=self.host, port=self.port, dbname=dbname or self.name, user=self.user,
                               password=self.password, connect_timeout=10, **kwargs)


# --- backup and restore ------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def backup_create(path: str | Path, *, source: Target | None = None) -> dict:
    """Dump the database in pg_dump's custom format to ``path`` (written atomically, mode 0600).

    Also writes ``path.sha256``. The archive's table of contents is read back with
    ``pg_restore --list`` before it is called done. Returns a summary.
    """
    source = source or Target.from_settings()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    started = time.monotonic()
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            _run([*pg_program("pg_dump"), "-Fc", "-Z", "6", *source.args(), "-d", source.name], stdout=out,
                 env=source.env(), timeout=3600)
        with open(partial, "rb") as archive:
            toc = _run([*pg_program("pg_restore"), "--list"], stdin=archive, timeout=600).stdout
        if b"TABLE DATA" not in toc:
            raise BackupError("the archive holds no table data")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    digest = sha256_file(path)
    Path(str(path) + ".sha256").write_text(f"{digest}  {path.name}\n", encoding="utf-8")
    return {"path": str(path), "bytes": path.stat().st_size, "sha256": digest, "database": source.name,
            "seconds": round(time.monotonic() - started, 1)}


def _check_digest(path: Path) -> None:
    sidecar = Path(str(path) + ".sha256")
    if sidecar.is_file():
        expected = sidecar.read_text(encoding="utf-8").split()[0]
        if sha256_file(path) != expected:
            raise BackupError(f"{path} does not match its checksum file (corrupted or altered)")


def database_exists(target: Target, name: str) -> bool:
    with target.connect("postgres", autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def backup_restore(path: str | Path, *, target: Target) -> dict:
    """Restore a pg_dump -Fc archive into a new database ``target.name`` (refused if it exists)."""
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"no backup at {path}")
    _check_digest(path)
    if database_exists(target, target.name):
        raise BackupError(f"database {target.name!r} already exists; restore into a new one")
    with target.connect("postgres", autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("CREATE DATABASE {} OWNER {}").format(
            psycopg.sql.Identifier(target.name), psycopg.sql.Identifier(target.user)))
    started = time.monotonic()
    with open(path, "rb") as archive:
        _run([*pg_program("pg_restore"), "--exit-on-error", "--no-owner", *target.args(), "-d", target.name],
             stdin=archive, env=target.env(), timeout=3600)
    return {"database": target.name, "seconds": round(time.monotonic() - started, 1)}


def table_counts(target: Target) -> dict[str, int]:
    """Exact row counts of the application's tables (schema public)."""
    with target.connect() as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")]
        return {t: conn.execute(psycopg.sql.SQL("SELECT count(*) FROM public.{}").format(
            psycopg.sql.Identifier(t))).fetchone()[0] for t in tables}


# --- a scratch cluster -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ScratchCluster:
    """A throwaway PostgreSQL cluster on 127.0.0.1 (data checksums on), for drills and chaos tests.

    Never touches the development cluster: its own data directory, socket directory and port.
    The application role is created as a superuser with a random password (CREATE EXTENSION age
    needs one), and ``target(name)`` connects as it.
    """

    def __init__(self, *, port: int | None = None, user: str = "lextrace"):
        self.port = port or free_port()
        self.user = user
        self.password = secrets.token_urlsafe(24)
        self.superuser_password = secrets.token_urlsafe(24)
        tag = f"lextrace-scratch-{uuid.uuid4().hex[:10]}"
        if _in_pgroot():
            self.inside = Path("/tmp") / tag          # as the server sees it
            self.host_dir = PGROOT / "tmp" / tag      # as we see it
        else:
            self.host_dir = Path(tempfile.gettempdir()) / tag
            self.inside = self.host_dir
        self.started = False

    @property
    def data_in(self) -> str:
        return str(self.inside / "data")

    @property
    def log_path(self) -> Path:
        return self.host_dir / "postgres.log"

    def _give_to_postgres(self, inside: Path, host: Path) -> None:
        if os.geteuid() != 0:
            return
        if _in_pgroot():
            _run(["chroot", str(PGROOT), "chown", "postgres:postgres", str(inside)])
        else:
            import pwd

            entry = pwd.getpwnam("postgres")
            os.chown(host, entry.pw_uid, entry.pw_gid)

    def init(self) -> ScratchCluster:
        self.host_dir.mkdir(mode=0o700, parents=True)
        pwfile = self.host_dir / "pw"
        pwfile.write_text(self.superuser_password + "\n", encoding="utf-8")
        pwfile.chmod(0o600)
        self._give_to_postgres(self.inside, self.host_dir)
        self._give_to_postgres(self.inside / "pw", pwfile)
        _run(_as_postgres([*pg_program("initdb"), "-D", self.data_in, "--data-checksums", "--encoding=UTF8",
                           "--locale=C.UTF-8", "--auth-local=scram-sha-256", "--auth-host=scram-sha-256",
                           "-U", "postgres", f"--pwfile={self.inside / 'pw'}"]), timeout=300)
        pwfile.unlink()
        with open(self.host_dir / "data" / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(f"\n# --- lextrace scratch cluster ---\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.inside}'\ndynamic_shared_memory_type = mmap\n"
                       "session_preload_libraries = 'age'\nmax_connections = 30\nshared_buffers = 32MB\nfsync = on\n")
        return self

    def start(self) -> ScratchCluster:
        _run(_as_postgres([*pg_program("pg_ctl"), "-D", self.data_in, "-l", str(self.inside / "postgres.log"), "-w",
                           "-t", "60", "start"]), timeout=90)
        self.started = True
        if not self._has_role():
            with self.superuser().connect("postgres", autocommit=True) as conn:
                conn.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                    psycopg.sql.Identifier(self.user), psycopg.sql.Literal(self.password)))
        return self

    def _has_role(self) -> bool:
        with self.superuser().connect("postgres", autocommit=True) as conn:
            return conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [self.user]).fetchone() is not None

    def stop(self, mode: str = "fast") -> None:
        if self.started:
            _run(_as_postgres([*pg_program("pg_ctl"), "-D", self.data_in, "-m", mode, "-w", "-t", "60", "stop"]),
                 timeout=90)
            self.started = False

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except BackupError as exc:
            logger.warning("scratch cluster on port %s did not stop cleanly: %s", self.port, exc)
        shutil.rmtree(self.host_dir, ignore_errors=True)

    def superuser(self) -> Target:
        return Target("127.0.0.1", self.port, "postgres", "postgres", self.superuser_password)

    def target(self, name: str) -> Target:
        return Target("127.0.0.1", self.port, name, self.user, self.password)

    def setting(self, name: str) -> str:
        with self.superuser().connect("postgres") as conn:
            return conn.execute("SELECT current_setting(%s)", [name]).fetchone()[0]

    def __enter__(self) -> ScratchCluster:
        try:
            return self.init().start()
        except BaseException:
            self.destroy()
            raise

    def __exit__(self, *exc) -> None:
        self.destroy()


# --- physical backups and point-in-time recovery ---------------------------------------------------
#
# Logical dumps (above) restore a database as it was when the dump ran. A base backup plus the
# archived write-ahead log restores the whole cluster to any moment after the base backup. The
# functions below do it for a ScratchCluster (the drill and the chaos test); on a production host
# the same three steps run against its cluster: archive_command, pg_basebackup + pg_verifybackup,
# then a recovery with restore_command and recovery_target_time (docs/OPERATIONS.md).


def wal_archiving_enable(cluster: ScratchCluster) -> tuple[Path, Path]:
    """Turn on WAL archiving into the cluster's ``archive/`` directory (restarts it).
    Returns the directory as we see it and as the server sees it."""
    host, inside = cluster.host_dir / "archive", cluster.inside / "archive"
    host.mkdir(mode=0o700, exist_ok=True)
    cluster._give_to_postgres(inside, host)
    cluster.stop()
    with open(cluster.host_dir / "data" / "postgresql.conf", "a", encoding="utf-8") as conf:
        conf.write(f"wal_level = replica\narchive_mode = on\n"
                   f"archive_command = 'test ! -f {inside}/%f && cp %p {inside}/%f'\n")
    cluster.start()
    return host, inside


def base_backup(cluster: ScratchCluster, name: str = "base") -> tuple[Path, dict]:
    """pg_basebackup (plain format, WAL streamed, SHA-256 manifest) checked by pg_verifybackup.
    Returns the backup directory (as we see it) and what was done."""
    host, inside = cluster.host_dir / name, cluster.inside / name
    env = dict(os.environ, PGPASSWORD=cluster.superuser_password)
    started = time.monotonic()
    _run(_as_postgres([*pg_program("pg_basebackup"), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres",
                       "-D", str(inside), "-Fp", "-X", "stream", "-c", "fast", "--manifest-checksums=SHA256"]),
         env=env, timeout=600)
    took = time.monotonic() - started
    verified = _run(_as_postgres([*pg_program("pg_verifybackup"), str(inside)]), timeout=600)
    files = sum(1 for p in host.rglob("*") if p.is_file())
    return host, {"seconds": round(took, 2), "files": files,
                  "verify": verified.stdout.decode("utf-8", "replace").strip()[-200:]}


def point_in_time_restore(source: ScratchCluster, backup_host: Path, archive_inside: Path,
                          target_time: str) -> ScratchCluster:
    """A new cluster from ``backup_host`` replayed from the WAL archive up to ``target_time``, then
    promoted (writable). It keeps the source's roles and passwords; destroy it when done."""
    restored = ScratchCluster(user=source.user)
    restored.password, restored.superuser_password = source.password, source.superuser_password
    restored.host_dir.mkdir(mode=0o700, parents=True)
    restored._give_to_postgres(restored.inside, restored.host_dir)
    data = restored.host_dir / "data"
    shutil.copytree(backup_host, data)
    if os.geteuid() == 0:
        owner = (["chroot", str(PGROOT)] if _in_pgroot() else []) + ["chown", "-R", "postgres:postgres",
                                                                    restored.data_in]
        _run(owner)
    data.chmod(0o700)
    with open(data / "postgresql.conf", "a", encoding="utf-8") as conf:
        conf.write(f"\n# --- point-in-time restore ---\nport = {restored.port}\n"
                   f"unix_socket_directories = '{restored.inside}'\narchive_mode = off\n"
                   f"restore_command = 'cp {archive_inside}/%f %p'\n"
                   f"recovery_target_time = '{target_time}'\nrecovery_target_action = 'promote'\n")
    (data / "recovery.signal").touch()
    restored.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with restored.superuser().connect("postgres", autocommit=True) as conn:
            if not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                return restored
        time.sleep(0.5)
    restored.destroy()
    raise BackupError(f"the restored cluster did not leave recovery (target {target_time})")


# --- the drill ------------------------------------------------------------------------------------


@dataclass
class DrillStep:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class DrillReport:
    steps: list[DrillStep] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps)

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self.steps.append(DrillStep(name, ok, detail))
        return ok

    def as_dict(self) -> dict:
        return {"ok": self.ok, "steps": [s.__dict__ for s in self.steps]}


def _manage(args: list[str], target: Target, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, DB_HOST=target.host, DB_PORT=str(target.port), DB_NAME=target.name, DB_USER=target.user,
               DB_PASSWORD=target.password)
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _stored_judgment(source: Target) -> dict | None:
    """The newest stored evidence bundle of a finished run (the one the drill replays)."""
    with source.connect() as conn:
        row = conn.execute(
            "SELECT r.bundle FROM cases_defendantresult r JOIN cases_judgmentrun j ON j.id = r.run_id "
            "WHERE j.status = 'done' ORDER BY r.id DESC LIMIT 1").fetchone()
    return row[0] if row else None


def restore_drill(*, archive: str | Path | None = None, source: Target | None = None,
                  workdir: str | Path | None = None, keep: bool = False) -> DrillReport:
    """Dump (unless ``archive`` is given), restore into a fresh cluster and verify there."""
    source = source or Target.from_settings()
    report = DrillReport()
    with tempfile.TemporaryDirectory(prefix="lextrace-drill-", dir=workdir) as tmp:
        if archive is None:
            try:
                made = backup_create(Path(tmp) / "drill.dump", source=source)
            except BackupError as exc:
                report.add("backup", False, str(exc))
                return report
            archive = made["path"]
            report.add("backup", True, f"{made['bytes']} bytes in {made['seconds']} s, sha256 {made['sha256'][:16]}…")
        source_counts = table_counts(source)
        judgment = _stored_judgment(source)
        cluster = ScratchCluster()
        try:
            cluster.init().start()
            report.add("fresh cluster", cluster.setting("data_checksums") == "on",
                       f"127.0.0.1:{cluster.port}, data_checksums={cluster.setting('data_checksums')}")
            target = cluster.target(source.name)
            try:
                restored = backup_restore(archive, target=target)
                report.add("restore", True, f"{restored['seconds']} s")
            except BackupError as exc:
                report.add("restore", False, str(exc))
                return report
            result = _manage(["migrate", "--check"], target)
            report.add("migrations at head", result.returncode == 0, (result.stdout + result.stderr).strip()[-500:])
            result = _manage(["verify_audit_chain"], target)
            report.add("audit chain", result.returncode == 0, (result.stdout + result.stderr).strip()[-500:])
            restored_counts = table_counts(target)
            differ = {t: (n, restored_counts.get(t)) for t, n in source_counts.items() if restored_counts.get(t) != n}
            report.add("row counts", not differ,
                       f"{len(source_counts)} tables, {sum(source_counts.values())} rows"
                       + (f"; differ: {differ}" if differ else ""))
            if judgment is None:
                report.add("stored judgment", False, "the source holds no finished judgment run to re-verify")
            else:
                bundle_file = Path(tmp) / "judgment.json"
                bundle_file.write_text(json.dumps(judgment, ensure_ascii=False), encoding="utf-8")
                result = _manage(["replay_bundle", "--file", str(bundle_file)], target)
                out = (result.stdout + result.stderr).strip()
                report.add("stored judgment", result.returncode == 0 and "0 changed" in out, out[-500:])
            amcheck = subprocess.run([*pg_program("pg_amcheck"), *target.args(), "--install-missing",
                                      "--heapallindexed", target.name],
                                     env=target.env(), capture_output=True, text=True, timeout=900, check=False)
            report.add("pg_amcheck", amcheck.returncode == 0,
                       (amcheck.stdout + amcheck.stderr).strip()[-500:] or "no corruption reported")
        except BackupError as exc:
            report.add("fresh cluster", False, str(exc))
        finally:
            if not keep:
                cluster.destroy()
    return report
