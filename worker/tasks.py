"""Thin Celery tasks: ids in, one service call, the retry policy.

Arguments are ids only (no facts or personal data in the broker). Every task
must be safe to run twice: the broker delivers at least once.
"""

from worker.celery import app


@app.task(name="worker.tasks.worker_ping", acks_late=True, max_retries=0)
def worker_ping(ping_id: int) -> None:
    from apps.core.services import worker_ping_answer

    worker_ping_answer(ping_id=ping_id, hostname=worker_ping.request.hostname or "")


@app.task(name="worker.tasks.corpus_import_check", acks_late=True, max_retries=0)
def corpus_import_check(batch_id: int) -> None:
    """The dry run of an uploaded corpus file; the admin then publishes or discards it."""
    from apps.corpus.services.uploads import corpus_check_run_batch

    corpus_check_run_batch(batch_id=batch_id)


@app.task(name="worker.tasks.corpus_import_run", acks_late=True, max_retries=0)
def corpus_import_run(batch_id: int) -> None:
    from apps.corpus.services.uploads import corpus_import_run_batch

    corpus_import_run_batch(batch_id=batch_id)


@app.task(name="worker.tasks.training_evaluation_run", acks_late=True, max_retries=0)
def training_evaluation_run(run_id: int) -> None:
    """Continue an evaluation for one time slice; queue the next slice until it is done (training queue)."""
    from apps.evaluation.services.evaluating import evaluation_run_chunk

    if evaluation_run_chunk(run_id):
        training_evaluation_run.delay(run_id)


@app.task(name="worker.tasks.judgment_run_execute", acks_late=True, max_retries=0)
def judgment_run_execute(run_id: int) -> None:
    """Execute one judgment run. A duplicate or redelivered message is harmless: the run is claimed
    under a lock, and a run whose previous attempt died is taken over (apps.cases.services.runs)."""
    from apps.cases.services.runs import judgment_execute

    judgment_execute(run_id=run_id, worker=judgment_run_execute.request.hostname or "")


@app.task(name="worker.tasks.training_statistical_run", acks_late=True, max_retries=0)
def training_statistical_run(run_id: int) -> None:
    """Retrain the statistical models (training queue); the gate decides whether they are activated."""
    from apps.registry.training import training_execute

    training_execute(run_id)
