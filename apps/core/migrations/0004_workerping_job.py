"""WorkerPing becomes a job (apps/core/models.py Job): the shared timestamps and a status.

Every stored ping is kept: requested_at and answered_at are renamed, not replaced, and a ping's
status follows from what it recorded: answered → done, not answered (yet) → queued."""

from django.db import migrations, models


def statuses_from_answers(apps, schema_editor):
    """Every ping was added as queued; the answered ones are done."""
    WorkerPing = apps.get_model("core", "WorkerPing")
    WorkerPing.objects.filter(finished_at__isnull=False).update(status="done")


class Migration(migrations.Migration):

    dependencies = [
        ("core", "0003_definer_functions"),
    ]

    operations = [
        migrations.RenameField(model_name="workerping", old_name="requested_at", new_name="created_at"),
        migrations.RenameField(model_name="workerping", old_name="answered_at", new_name="finished_at"),
        migrations.AlterField(
            model_name="workerping",
            name="created_at",
            field=models.DateTimeField(auto_now_add=True, verbose_name="requested at"),
        ),
        migrations.AlterField(
            model_name="workerping",
            name="finished_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="finished at"),
        ),
        migrations.AddField(
            model_name="workerping",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="started at"),
        ),
        migrations.AddField(
            model_name="workerping",
            name="status",
            field=models.CharField(choices=[("queued", "queued"), ("running", "running"), ("done", "done")],
                                   db_index=True, default="queued", max_length=16, verbose_name="status"),
        ),
        migrations.AlterModelOptions(name="workerping", options={"ordering": ["-created_at"]}),
        # Backwards nothing is lost: the answers are finished_at, renamed back to answered_at.
        migrations.RunPython(statuses_from_answers, migrations.RunPython.noop),
    ]
