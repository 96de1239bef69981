"""audit_row_change: every insert, update and delete of the reviewed tables, captured by triggers.

The service-level trail (audit_event) records what the application does, with actor and reason.
This table catches what bypasses the services — queryset.update(), bulk_create(), raw SQL,
a console session — because a row trigger sees every write however it was made (C2). It is
append-only like audit_event (triggers refuse UPDATE, DELETE and TRUNCATE). Large columns are
kept as their md5 (TG_ARGV names them), never copied: the evidence bundle of a result is
identified, not duplicated.
"""

from django.db import migrations, models

WATCHED = [
    # table, columns kept as md5 only
    ("cases_case", ["facts"]),
    ("cases_defendantresult", ["bundle"]),
    ("review_review", []),
    ("review_reviewitem", []),
    ("review_decision", ["snapshot"]),
    ("review_legalhold", []),
    ("corpus_articleversion", ["text", "gloss_en"]),
]

CREATE = r"""
CREATE TABLE audit_row_change (
    id         bigserial   PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    txid       bigint      NOT NULL DEFAULT txid_current(),
    db_user    text        NOT NULL DEFAULT current_user,
    tbl        text        NOT NULL,
    op         text        NOT NULL CHECK (op IN ('INSERT', 'UPDATE', 'DELETE')),
    row_id     text        NOT NULL,
    old        jsonb       NULL,
    new        jsonb       NULL
);
CREATE INDEX audit_row_change_row_idx ON audit_row_change (tbl, row_id, id);

CREATE TRIGGER audit_row_change_no_update_delete
    BEFORE UPDATE OR DELETE ON audit_row_change
    FOR EACH ROW EXECUTE FUNCTION audit_event_refuse_change();
CREATE TRIGGER audit_row_change_no_truncate
    BEFORE TRUNCATE ON audit_row_change
    FOR EACH STATEMENT EXECUTE FUNCTION audit_event_refuse_change();

CREATE FUNCTION audit_row_capture() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    before_row jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
    after_row  jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
    col text;
BEGIN
    FOR i IN 0 .. TG_NARGS - 1 LOOP
        col := TG_ARGV[i];
        IF before_row ? col THEN
            before_row := (before_row - col) || jsonb_build_object(col || '_md5', md5(before_row ->> col));
        END IF;
        IF after_row ? col THEN
            after_row := (after_row - col) || jsonb_build_object(col || '_md5', md5(after_row ->> col));
        END IF;
    END LOOP;
    IF TG_OP = 'UPDATE' AND before_row = after_row THEN
        RETURN NULL;  -- nothing changed
    END IF;
    INSERT INTO audit_row_change (tbl, op, row_id, old, new)
    VALUES (TG_TABLE_NAME, TG_OP, coalesce(after_row ->> 'id', before_row ->> 'id'), before_row, after_row);
    RETURN NULL;
END
$fn$;
"""

DROP = r"""
DROP FUNCTION audit_row_capture() CASCADE;
DROP TABLE audit_row_change;
"""


def _triggers(create: bool) -> str:
    out = []
    for table, hashed in WATCHED:
        name = f"{table}_row_capture"
        if create:
            args = ", ".join(f"'{c}'" for c in hashed)
            out.append(f"CREATE TRIGGER {name} AFTER INSERT OR UPDATE OR DELETE ON {table} "
                       f"FOR EACH ROW EXECUTE FUNCTION audit_row_capture({args});")
        else:
            out.append(f"DROP TRIGGER IF EXISTS {name} ON {table};")
    return "\n".join(out)


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0001_initial"),
        ("cases", "0001_initial"),
        ("corpus", "0001_initial"),
        ("review", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(CREATE, DROP),
        migrations.RunSQL(_triggers(True), _triggers(False)),
        migrations.CreateModel(
            name="AuditRowChange",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("at", models.DateTimeField()),
                ("txid", models.BigIntegerField()),
                ("db_user", models.TextField()),
                ("tbl", models.TextField()),
                ("op", models.TextField()),
                ("row_id", models.TextField()),
                ("old", models.JSONField(null=True)),
                ("new", models.JSONField(null=True)),
            ],
            options={"db_table": "audit_row_change", "managed": False, "ordering": ["id"]},
        ),
    ]
