"""H1, H2, H3 (tier N): PostgreSQL crash under load, the backup/restore drill, checksums.

Every cluster here is a scratch cluster (initdb --data-checksums, 127.0.0.1, a free port),
never the development cluster.
"""

import json
import subprocess
import sys
import time

import pytest
from django.db import connection

from apps.cases.services.runs import judgment_execute
from apps.core.backup import ScratchCluster, Target, backup_create, backup_restore
from apps.core.drill import restore_drill, source_owner
from tests.cases.conftest import make_case, make_run
from tests.faults import ROOT, manage

pytestmark = [pytest.mark.n, pytest.mark.slow,
              # Without a django_db mark in the session pytest-django sets up no test database at all.
              pytest.mark.django_db(transaction=True)]


def source() -> Target:
    return Target.from_settings(name=connection.settings_dict["NAME"])


def test_h2_h3_the_drill_restores_into_a_fresh_cluster_and_everything_verifies(live):
    # Something worth restoring: a case (audit events) and a finished judgment run.
    case = make_case(live.staff_a, live.team_a)
    run = make_run(case, live.staff_a)
    assert judgment_execute(run_id=run.pk, worker="drill") == "done"
    report = restore_drill(source=source())
    print(json.dumps(report.as_dict(), ensure_ascii=False, indent=1))  # recorded by make chaos (-rA)
    steps = {s.name: s for s in report.steps}
    assert report.ok, json.dumps(report.as_dict(), ensure_ascii=False, indent=1)
    assert "data_checksums=on" in steps["fresh cluster"].detail  # H3
    assert "ok:" in steps["audit chain"].detail and "0 changed" in steps["stored judgment"].detail
    assert "owns nothing" in steps["roles"].detail  # restored by the owner; the app role is least-privileged


def test_h1_committed_writes_survive_an_immediate_stop_and_the_writer_reconnects(live, tmp_path):
    archive = backup_create(tmp_path / "seed.dump", source=source())["path"]
    from django.conf import settings

    with ScratchCluster(user=settings.DB_APP_USER, owner=source_owner(source())) as cluster:
        target = cluster.target("lextrace_h1")
        backup_restore(archive, target=cluster.owner_target("lextrace_h1"), app=cluster.user)
        env = {"DB_HOST": "127.0.0.1", "DB_PORT": str(cluster.port), "DB_NAME": target.name,
               "DB_USER": target.user, "DB_PASSWORD": target.password}
        # The application's own write path (case_create, audit in the same transaction), in a loop
        # that prints each id after its commit, and on errors drops the connection and tries again.
        writer_code = f"""
import sys, time
from django.db import connection, DatabaseError, InterfaceError
from apps.accounts.models import Team, User
from apps.cases.services.cases import case_create
from tests.cases.conftest import demo_case
import datetime as dt
record = demo_case("demo-case-001")
deadline, after_restart, errors = time.monotonic() + 120, 0, 0
while time.monotonic() < deadline and after_restart < 10:
    try:
        user, team = User.objects.get(pk={live.staff_a.pk}), Team.objects.get(pk={live.team_a.pk})
        case = case_create(user=user, team=team, facts=record["fact"], offence_date=dt.date(2018, 9, 14),
                           defendants=record["defendants"], title="h1")
        print("committed", case.pk, flush=True)
        if errors:
            after_restart += 1
    except (DatabaseError, InterfaceError) as exc:
        errors += 1
        print("error", type(exc).__name__, flush=True)
        connection.close()
        time.sleep(0.3)
print("done", errors, flush=True)
"""
        full_env = dict(__import__("os").environ, DJANGO_SETTINGS_MODULE="legalsite.settings_test", **env)
        writer = subprocess.Popen([sys.executable, "manage.py", "shell", "-c", writer_code], cwd=ROOT, env=full_env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        committed = []
        try:
            while len(committed) < 15:
                line = writer.stdout.readline()
                assert line, writer.stderr.read()[-3000:]
                if line.startswith("committed"):
                    committed.append(int(line.split()[1]))
            cluster.stop("immediate")  # a crash: no checkpoint, no goodbye to the clients
            time.sleep(2)
            cluster.start()  # crash recovery replays the WAL
            out, _ = writer.communicate(timeout=150)
        finally:
            if writer.poll() is None:
                writer.kill()
        committed += [int(line.split()[1]) for line in out.splitlines() if line.startswith("committed")]
        print(f"H1: {len(committed)} commits acknowledged, writer: {out.strip().splitlines()[-1]}")
        assert "error" in out, "the writer never saw the crash"
        assert out.strip().splitlines()[-1].startswith("done"), out[-2000:]
        with target.connect() as conn:
            stored = {r[0] for r in conn.execute("SELECT id FROM cases_case WHERE title = 'h1'")}
        assert set(committed) <= stored, sorted(set(committed) - stored)  # nothing acknowledged was lost
        assert len(committed) >= 25  # 15 before the crash, 10 after the reconnect
        chain = manage("verify_audit_chain", env=env)
        assert chain.returncode == 0 and chain.stdout.startswith("ok:"), chain.stdout + chain.stderr
        fks = manage("shell", "-c", "from django.db import connection; "
                     "cur = connection.cursor(); cur.execute('SET CONSTRAINTS ALL IMMEDIATE'); "
                     "print(connection.check_constraints() or 'constraints ok')", env=env)
        assert fks.returncode == 0 and "constraints ok" in fks.stdout, fks.stdout + fks.stderr


def test_h2_a_base_backup_and_the_wal_archive_restore_the_cluster_to_a_chosen_moment():
    """Physical backup (pg_basebackup + pg_verifybackup) and point-in-time recovery into a new cluster:
    rows committed before the target time are there, rows committed after it are not."""
    from apps.core.backup import base_backup, point_in_time_restore, wal_archiving_enable

    with ScratchCluster() as cluster:
        _archive_host, archive_inside = wal_archiving_enable(cluster)
        admin = cluster.superuser()
        with admin.connect("postgres", autocommit=True) as conn:
            conn.execute("CREATE TABLE ledger (id serial PRIMARY KEY, phase text NOT NULL)")
            conn.execute("INSERT INTO ledger (phase) SELECT 'before the backup' FROM generate_series(1, 100)")
        backup, done = base_backup(cluster)
        print("H2 base backup:", done)
        with admin.connect("postgres", autocommit=True) as conn:
            conn.execute("INSERT INTO ledger (phase) SELECT 'after the backup' FROM generate_series(1, 50)")
            target = conn.execute("SELECT clock_timestamp()::text").fetchone()[0]
            time.sleep(1.5)
            conn.execute("INSERT INTO ledger (phase) SELECT 'after the target' FROM generate_series(1, 25)")
            segment = conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchone()[0]
            conn.execute("SELECT pg_switch_wal()")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                archived = conn.execute("SELECT last_archived_wal FROM pg_stat_archiver").fetchone()[0]
                if archived and archived >= segment:
                    break
                time.sleep(0.3)
            else:
                pytest.fail(f"WAL segment {segment} was not archived")
        started = time.monotonic()
        restored = point_in_time_restore(cluster, backup, archive_inside, target)
        try:
            with restored.superuser().connect("postgres", autocommit=True) as conn:
                phases = dict(conn.execute("SELECT phase, count(*) FROM ledger GROUP BY phase").fetchall())
                conn.execute("INSERT INTO ledger (phase) VALUES ('written after the restore')")  # promoted
                checksums = conn.execute("SHOW data_checksums").fetchone()[0]
            print(f"H2 PITR to {target}: {phases} in {time.monotonic() - started:.1f} s")
            assert phases == {"before the backup": 100, "after the backup": 50}
            assert checksums == "on"
        finally:
            restored.destroy()
