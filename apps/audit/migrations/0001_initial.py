"""audit_event: the table, its chain constraints and the append-only triggers, in SQL.

Three guards, each for a different actor:
* a role granted only SELECT and INSERT cannot UPDATE/DELETE/TRUNCATE
  (privileges; see docs/ARCHITECTURE.md "Audit trail");
* the table owner and a superuser are stopped by the BEFORE UPDATE/DELETE row
  trigger and the BEFORE TRUNCATE statement trigger, unless they disable
  triggers (ALTER TABLE … DISABLE TRIGGER, session_replication_role = replica);
* what a superuser does with triggers disabled is found by the verifier and
  the signed checkpoints (apps/audit/verify.py, apps/audit/checkpoint.py).

The insert trigger also checks the link: seq n may only be inserted after
seq n-1 with prev_hash = hash of n-1 (64 zeros for seq 1). With seq as the
primary key and prev_hash unique, two writers can never fork the chain.
"""

from django.db import migrations, models

CREATE = r"""
CREATE TABLE audit_event (
    seq            bigint      PRIMARY KEY CHECK (seq >= 1),
    at             timestamptz NOT NULL,
    actor_id       bigint      NULL,
    actor_username text        NOT NULL DEFAULT '',
    role           text        NOT NULL DEFAULT '',
    request_id     text        NOT NULL DEFAULT '',
    ip             text        NOT NULL DEFAULT '',
    action         text        NOT NULL CHECK (action <> ''),
    object_type    text        NOT NULL DEFAULT '',
    object_id      text        NOT NULL DEFAULT '',
    before         jsonb       NULL,
    after          jsonb       NULL,
    reason         text        NOT NULL DEFAULT '',
    prev_hash      char(64)    NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
    hash           char(64)    NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT audit_event_prev_hash_unique UNIQUE (prev_hash)
);
CREATE INDEX audit_event_action_idx ON audit_event (action, seq);
CREATE INDEX audit_event_object_idx ON audit_event (object_type, object_id, seq);

COMMENT ON TABLE audit_event IS
    'Append-only, hash-chained audit trail (INV-5). Written only by apps.audit.services.audit_append.';

CREATE FUNCTION audit_event_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    RAISE EXCEPTION 'audit_event is append-only: % refused', TG_OP
        USING ERRCODE = 'restrict_violation',
              HINT = 'Audit events are never changed or removed; record a correcting event instead.';
END
$fn$;

CREATE TRIGGER audit_event_no_update_delete
    BEFORE UPDATE OR DELETE ON audit_event
    FOR EACH ROW EXECUTE FUNCTION audit_event_refuse_change();

CREATE TRIGGER audit_event_no_truncate
    BEFORE TRUNCATE ON audit_event
    FOR EACH STATEMENT EXECUTE FUNCTION audit_event_refuse_change();

CREATE FUNCTION audit_event_check_link() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    expected text;
BEGIN
    IF NEW.seq = 1 THEN
        expected := repeat('0', 64);
    ELSE
        SELECT e.hash INTO expected FROM audit_event e WHERE e.seq = NEW.seq - 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'audit_event seq % does not follow an existing event', NEW.seq
                USING ERRCODE = 'foreign_key_violation';
        END IF;
    END IF;
    IF NEW.prev_hash IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'audit_event seq %: prev_hash does not match the hash of seq %', NEW.seq, NEW.seq - 1
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER audit_event_link
    BEFORE INSERT ON audit_event
    FOR EACH ROW EXECUTE FUNCTION audit_event_check_link();
"""

DROP = r"""
DROP TABLE audit_event;
DROP FUNCTION audit_event_check_link();
DROP FUNCTION audit_event_refuse_change();
"""


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.RunSQL(CREATE, DROP),
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                ("seq", models.BigIntegerField(primary_key=True, serialize=False)),
                ("at", models.DateTimeField(verbose_name="time")),
                ("actor_id", models.BigIntegerField(blank=True, null=True)),
                ("actor_username", models.TextField(blank=True, verbose_name="actor")),
                ("role", models.TextField(blank=True, verbose_name="role")),
                ("request_id", models.TextField(blank=True, verbose_name="request id")),
                ("ip", models.TextField(blank=True, verbose_name="IP address")),
                ("action", models.TextField(verbose_name="action")),
                ("object_type", models.TextField(blank=True, verbose_name="object type")),
                ("object_id", models.TextField(blank=True, verbose_name="object id")),
                ("before", models.JSONField(blank=True, null=True, verbose_name="before")),
                ("after", models.JSONField(blank=True, null=True, verbose_name="after")),
                ("reason", models.TextField(blank=True, verbose_name="reason")),
                ("prev_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64)),
            ],
            options={
                "verbose_name": "audit event",
                "verbose_name_plural": "audit events",
                "db_table": "audit_event",
                "ordering": ["-seq"],
                "managed": False,
            },
        ),
    ]
