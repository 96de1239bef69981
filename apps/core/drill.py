"""The restore drill (H2, H3, INV-12): the newest dump restored into a fresh scratch cluster and checked
there with the application's own code (apps/core/backup.py has the backups, restores and the cluster)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from apps.core.backup import (
    ROOT,
    BackupError,
    ScratchCluster,
    Target,
    backup_create,
    backup_restore,
    pg_program,
    table_counts,
)


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


def _manage(args: list[str], target: Target, app: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DB_OWNER_")}
    env.update(DB_HOST=target.host, DB_PORT=str(target.port), DB_NAME=target.name, DB_USER=target.user,
               DB_PASSWORD=target.password, DB_APP_USER=app)
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _stored_judgment(source: Target) -> dict | None:
    """The newest stored evidence bundle of a finished run (the one the drill replays)."""
    with source.connect() as conn:
        row = conn.execute(
            "SELECT r.bundle FROM cases_defendantresult r JOIN cases_judgmentrun j ON j.id = r.run_id "
            "WHERE j.status = 'done' ORDER BY r.id DESC LIMIT 1").fetchone()
    return row[0] if row else None


def source_owner(source: Target) -> str:
    """The role that owns the source database's tables (the owner role of apps/core/db_roles.py)."""
    with source.connect() as conn:
        row = conn.execute("SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('public.audit_event')"
                           ).fetchone()
    return row[0] if row and row[0] else "lextrace_owner"


def privileges_check(target: Target) -> tuple[bool, str]:
    """What the application role may do in a database: no superuser, owns nothing, only SELECT and
    INSERT on the audit tables."""
    from apps.core.db_roles import APPEND_ONLY_TABLES

    problems = []
    with target.connect() as conn:
        superuser, bypass, createdb = conn.execute(
            "SELECT rolsuper, rolbypassrls, rolcreatedb FROM pg_roles WHERE rolname = current_user").fetchone()
        if superuser or bypass or createdb:
            problems.append("the application role has SUPERUSER, BYPASSRLS or CREATEDB")
        owned = conn.execute("SELECT count(*) FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles "
                             "WHERE rolname = current_user)").fetchone()[0]
        if owned:
            problems.append(f"the application role owns {owned} relations")
        for table in APPEND_ONLY_TABLES:
            allowed = [p for p in ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "MAINTAIN")
                       if conn.execute("SELECT has_table_privilege(%s, %s)", [table, p]).fetchone()[0]]
            if allowed != ["SELECT", "INSERT"]:
                problems.append(f"{table}: {', '.join(allowed)}")
    return not problems, "; ".join(problems) or f"{target.user}: no superuser, owns nothing, audit tables SELECT, INSERT"


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
        # The same two roles as the source, provisioned as the development cluster is; the restore is
        # the production procedure: the owner creates the database and restores into it.
        cluster = ScratchCluster(user=source.user, owner=source_owner(source))
        try:
            cluster.init().start()
            report.add("fresh cluster", cluster.setting("data_checksums") == "on",
                       f"127.0.0.1:{cluster.port}, data_checksums={cluster.setting('data_checksums')}")
            target, owner = cluster.target(source.name), cluster.owner_target(source.name)
            try:
                restored = backup_restore(archive, target=owner, app=cluster.user)
                report.add("restore", True, f"{restored['seconds']} s as {cluster.owner}")
            except BackupError as exc:
                report.add("restore", False, str(exc))
                return report
            report.add("roles", *privileges_check(target))
            result = _manage(["migrate", "--check"], owner, cluster.user)
            report.add("migrations at head", result.returncode == 0, (result.stdout + result.stderr).strip()[-500:])
            result = _manage(["verify_audit_chain"], target, cluster.user)
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
                result = _manage(["replay_bundle", "--file", str(bundle_file)], target, cluster.user)
                out = (result.stdout + result.stderr).strip()
                report.add("stored judgment", result.returncode == 0 and "0 changed" in out, out[-500:])
            # amcheck is an extension a superuser installs: the scratch cluster's own postgres runs it.
            admin = cluster.superuser()
            amcheck = subprocess.run([*pg_program("pg_amcheck"), *admin.args(), "--install-missing",
                                      "--heapallindexed", target.name],
                                     env=admin.env(), capture_output=True, text=True, timeout=900, check=False)
            report.add("pg_amcheck", amcheck.returncode == 0,
                       (amcheck.stdout + amcheck.stderr).strip()[-500:] or "no corruption reported")
        except BackupError as exc:
            report.add("fresh cluster", False, str(exc))
        finally:
            if not keep:
                cluster.destroy()
    return report
