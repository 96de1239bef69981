"""Logical backups (pg_dump -Fc), restores (pg_restore), a scratch cluster and PITR; the restore drill
(H2, H3, INV-12) that uses them is apps/core/drill.py.

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
import logging
import os
import secrets
import shutil
import socket
import subprocess
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
    def from_settings(cls, name: str | None = None, *, owner: bool = False) -> Target:
        """The configured server as the application role, or as the owner role (``DB_OWNER_USER`` and
        ``DB_OWNER_PASSWORD``, read here only: restores create databases, which only the owner may)."""
        from legalsite.env import env_str

        db = settings.DATABASES["default"]
        user, password = db["USER"], db.get("PASSWORD") or ""
        if owner:
            user = env_str("DB_OWNER_USER", "") or user
            password = env_str("DB_OWNER_PASSWORD", "") if user != db["USER"] else password
        return cls(host=db.get("HOST") or "127.0.0.1", port=int(db.get("PORT") or 5432), name=name or db["NAME"],
                   user=user, password=password)

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


# Provisioning creates the extensions (a superuser's job) and grants on AGE's catalog in every
# database, template1 included (apps/core/db_roles.py); a restore by the owner role leaves those
# entries of the archive out instead of failing on them.
def _restorable_entries(toc: str) -> str:
    kept = []
    for line in toc.splitlines():
        entry = line.split(";", 1)[-1]
        # The extensions, their comments, AGE's schema and the grants on it (the schema's rows,
        # TABLE DATA ag_catalog ag_graph / ag_label, are restored: they name the graph).
        if " EXTENSION " in entry or " SCHEMA - ag_catalog " in entry + " " or (" ACL " in entry and "ag_catalog" in entry):
            continue
        kept.append(line)
    return "\n".join(kept) + "\n"


def backup_restore(path: str | Path, *, target: Target, app: str | None = None) -> dict:
    """Restore a pg_dump -Fc archive into a new database ``target.name`` (refused if it exists).

    ``target`` connects as the owner role (it creates the database and owns what is restored);
    the archive's grants to the application role come back with it, and the application's
    privileges are applied again afterwards (apps/core/db_roles.py), as after a migration.
    """
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"no backup at {path}")
    _check_digest(path)
    if database_exists(target, target.name):
        raise BackupError(f"database {target.name!r} already exists; restore into a new one")
    with target.connect("postgres", autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("CREATE DATABASE {} OWNER {}").format(
            psycopg.sql.Identifier(target.name), psycopg.sql.Identifier(target.user)))
        missing = _missing_extensions(target)
    if missing:
        raise BackupError(f"the new database {target.name!r} lacks the extensions {', '.join(missing)}: a superuser "
                          "creates them once in template1 (scripts/services.sh; docs/OPERATIONS.md, Database roles)")
    started = time.monotonic()
    with open(path, "rb") as archive:
        toc = _run([*pg_program("pg_restore"), "--list"], stdin=archive, timeout=600).stdout.decode("utf-8")
    # The list is read by pg_restore by its path, inside the Debian 13 root when it runs there.
    name = f"lextrace-restore-{uuid.uuid4().hex[:12]}.list"
    listing, seen_as = (PGROOT / "tmp" / name, f"/tmp/{name}") if _in_pgroot() else (Path(tempfile.gettempdir()) / name, None)
    try:
        # Created exclusively (a pre-planted file of that name makes the restore fail, never used).
        with os.fdopen(os.open(listing, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "w", encoding="utf-8") as out:
            out.write(_restorable_entries(toc))
        with open(path, "rb") as archive:
            _run([*pg_program("pg_restore"), "--exit-on-error", "--no-owner", "--use-list", seen_as or str(listing),
                  *target.args(), "-d", target.name], stdin=archive, env=target.env(), timeout=3600)
    finally:
        listing.unlink(missing_ok=True)
    grants = _app_grants(target, app)
    return {"database": target.name, "seconds": round(time.monotonic() - started, 1), "grants": grants}


def _missing_extensions(target: Target) -> list[str]:
    from apps.core.db_roles import EXTENSIONS

    with target.connect() as conn:
        found = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
    return [e for e in EXTENSIONS if e not in found]


def _app_grants(target: Target, app: str | None = None) -> int:
    """The application role's privileges on the restored database, applied as its owner."""
    from apps.core.db_grants import app_grant_statements

    app = app or settings.DB_APP_USER
    if app == target.user:
        return 0
    with target.connect() as conn, conn.cursor() as cursor:
        statements = app_grant_statements(cursor, app)
        for statement in statements:
            cursor.execute(statement)
    return len(statements)


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
    It is provisioned like the development cluster (apps/core/db_roles.py): an owner role and a
    non-superuser application role with random passwords, the extensions created by the
    superuser in template1. ``target(name)`` connects as the application role,
    ``owner_target(name)`` as the owner, ``superuser()`` as postgres.
    """

    def __init__(self, *, port: int | None = None, user: str = "lextrace", owner: str = "lextrace_owner"):
        self.port = port or free_port()
        self.user = user
        self.owner = owner
        self.password = secrets.token_urlsafe(24)
        self.owner_password = secrets.token_urlsafe(24)
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
            self.provision()
        return self

    def provision(self) -> None:
        """The roles, and the extensions in template1, as scripts/services.sh sets up its cluster."""
        from apps.core.db_roles import cluster_sql, database_sql

        with self.superuser().connect("postgres", autocommit=True) as conn:
            for statement in cluster_sql(owner=self.owner, owner_password=self.owner_password, app=self.user,
                                         app_password=self.password):
                conn.execute(statement)
        with self.superuser().connect("template1", autocommit=True) as conn:
            for statement in database_sql(owner=self.owner, app=self.user):
                conn.execute(statement)

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

    def owner_target(self, name: str) -> Target:
        return Target("127.0.0.1", self.port, name, self.owner, self.owner_password)

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
    restored = ScratchCluster(user=source.user, owner=source.owner)
    restored.password, restored.superuser_password = source.password, source.superuser_password
    restored.owner_password = source.owner_password
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
