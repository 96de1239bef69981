"""The Celery app. Configuration comes from Django settings (CELERY_*)."""

import os

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

app = Celery("lextrace")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = ("worker.tasks",)


class WorkerAlive(bootsteps.StartStopStep):
    """Refresh the worker-liveness mark in Redis from the worker's timer (degraded-mode banner)."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs):
        super().__init__(worker, **kwargs)
        self.tref = None

    def start(self, worker):
        from django.conf import settings

        from apps.core.operations import worker_alive_mark

        def beat():
            worker_alive_mark(worker.hostname or "")

        beat()
        self.tref = worker.timer.call_repeatedly(settings.WORKER_ALIVE_INTERVAL_S, beat)

    def stop(self, worker):
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None


app.steps["worker"].add(WorkerAlive)
