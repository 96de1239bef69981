"""The migrations that made every job kind a Job (apps/core/models.py) keep every stored row, and map
what a kind recorded to the one status vocabulary: a ping answered is done, one not answered queued."""

import datetime as dt

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from apps.core.models import JobStatus, WorkerPing
from apps.corpus.models import ImportBatch
from apps.evaluation.models import EvaluationRun
from apps.registry.models import TrainingRun
from tests.conftest import as_owner

BEFORE = {"core": "0003_definer_functions", "corpus": "0003_import_formats", "evaluation": "0003_evaluationrun_mode",
          "registry": "0004_auditor_kind"}
T0 = timezone.make_aware(dt.datetime(2026, 1, 2, 3, 4, 5))


def _migrate(targets: dict[str, str | None]):
    """Migrate each app to its target (None: its latest migration); the historical models at that state."""
    with as_owner():
        for app, name in targets.items():
            call_command("migrate", app, *([name] if name else []), verbosity=0)
    executor = MigrationExecutor(connection)
    return executor.loader.project_state([(app, name) for app, name in targets.items() if name]).apps


def _old_rows(apps) -> dict:
    """Rows as each kind stored them before: one of every status it had, with its timestamps."""
    Ping = apps.get_model("core", "WorkerPing")
    Batch = apps.get_model("corpus", "ImportBatch")
    Evaluation = apps.get_model("evaluation", "EvaluationRun")
    Training = apps.get_model("registry", "TrainingRun")
    answered = Ping.objects.create(worker="w1")
    Ping.objects.filter(pk=answered.pk).update(requested_at=T0, answered_at=T0 + dt.timedelta(milliseconds=40))
    waiting = Ping.objects.create()
    Ping.objects.filter(pk=waiting.pk).update(requested_at=T0)
    end = T0 + dt.timedelta(hours=1)

    def stored(model, statuses: dict[str, bool], fields) -> dict[str, tuple[int, dt.datetime | None]]:
        """status → (pk, finished_at) of a row per status; ``statuses`` says which ones recorded an end."""
        return {s: (model.objects.create(status=s, finished_at=end if ended else None, **fields(s)).pk,
                    end if ended else None) for s, ended in statuses.items()}

    return {
        "pings": (answered.pk, waiting.pk),
        ImportBatch: stored(Batch, {"queued": False, "running": False, "checked": False, "published": True,
                                    "duplicate": True, "failed": True, "discarded": True},
                            fields=lambda s: {"filename": f"{s}.jsonl", "sha256": s[0] * 64}),
        # An interrupted (failed) evaluation recorded no end.
        EvaluationRun: stored(Evaluation, {"queued": False, "running": False, "done": True, "failed": False},
                              fields=lambda s: {"label": s, "dataset": "x.jsonl", "dataset_sha256": "0" * 64,
                                                "dataset_path": "/x", "message": f"{s} message"}),
        TrainingRun: stored(Training, {"queued": False, "running": False, "promoted": True, "rejected": True,
                                       "failed": True},
                            fields=lambda s: {"source": "corpus", "message": f"{s} message",
                                              "started_at": None if s == "queued" else T0}),
    }


@pytest.mark.django_db(transaction=True)
def test_the_job_migrations_keep_every_row_and_map_it_to_the_shared_vocabulary():
    try:
        rows = _old_rows(_migrate(BEFORE))
        _migrate(dict.fromkeys(BEFORE))

        answered, waiting = (WorkerPing.objects.get(pk=pk) for pk in rows["pings"])
        assert (answered.status, answered.created_at, answered.worker) == (JobStatus.DONE, T0, "w1")
        assert answered.finished_at == T0 + dt.timedelta(milliseconds=40) and answered.round_trip_ms == 40
        assert (waiting.status, waiting.created_at, waiting.finished_at) == (JobStatus.QUEUED, T0, None)
        assert answered.finished and not waiting.finished

        for model in (ImportBatch, EvaluationRun, TrainingRun):
            jobs = {job.pk: job for job in model.objects.all()}
            assert set(jobs) == {pk for pk, _ in rows[model].values()}, f"{model.__name__}: a row was lost"
            for status, (pk, finished_at) in rows[model].items():
                job = jobs[pk]
                assert job.status == status and status in model.Status.values and status in JobStatus.values
                assert job.finished_at == finished_at and job.created_at is not None
                assert job.finished == (status not in ("queued", "running", "checked"))
        assert all(b.started_at is None for b in ImportBatch.objects.all()), "no start was recorded before"
        assert {t.status: t.started_at for t in TrainingRun.objects.all()} == {
            "queued": None, "running": T0, "promoted": T0, "rejected": T0, "failed": T0}
        assert {e.status: e.message for e in EvaluationRun.objects.all()} == {
            s: f"{s} message" for s in ("queued", "running", "done", "failed")}

        # Backwards, a ping's answer is where it was.
        apps = _migrate({"core": BEFORE["core"]})
        Ping = apps.get_model("core", "WorkerPing")
        assert Ping.objects.get(pk=answered.pk).answered_at == answered.finished_at
        assert Ping.objects.get(pk=waiting.pk).answered_at is None
    finally:
        _migrate(dict.fromkeys(BEFORE))
