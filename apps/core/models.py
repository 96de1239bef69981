import sys

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class JobStatus(models.TextChoices):
    """The one status vocabulary of long-running work (apps/core/jobs.py).

    Every job waits for a worker (queued), is worked on (running) and ends done, failed or
    cancelled. The outcomes after them belong to one kind each and are kept because their users see
    them: an import is checked and waits for an admin's confirmation, then is published, found
    identical to an earlier import, or discarded by the admin; a training run's models are promoted
    or rejected by the gate."""

    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")
    CANCELLED = "cancelled", _("cancelled")
    CHECKED = "checked", _("checked: awaiting confirmation")
    PUBLISHED = "published", _("published")
    DUPLICATE = "duplicate", _("identical to an earlier import")
    DISCARDED = "discarded", _("discarded")
    PROMOTED = "promoted", _("promoted")
    REJECTED = "rejected", _("rejected by the gate")


def job_statuses(*after: JobStatus) -> type[models.TextChoices]:
    """A kind's ``Status``: queued and running, then the statuses ``after`` them that the kind uses,
    all words of JobStatus (same value, same label). Named like a nested class of the caller, so
    its members pickle like any other choices."""
    caller = sys._getframe(1)
    members = [(s.name, (s.value, s.label)) for s in (JobStatus.QUEUED, JobStatus.RUNNING, *after)]
    return models.TextChoices("Status", members, module=caller.f_globals["__name__"],
                              qualname=f"{caller.f_code.co_qualname}.Status")


def job_status_field(statuses: type[models.TextChoices]) -> models.CharField:
    """The status column of a job, limited to its kind's statuses."""
    return models.CharField(_("status"), max_length=16, choices=statuses.choices, default=JobStatus.QUEUED,
                            db_index=True)


class Job(models.Model):
    """A unit of long-running work done by a worker: judgment runs, import batches, training runs,
    evaluation runs, worker pings. Claimed with ``job_claim`` and ended with ``job_finish``
    (apps/core/jobs.py); a page follows it with ``polled_fragment`` until it is ``settled``.

    A kind declares ``Status = job_statuses(...)`` and ``status = job_status_field(Status)`` when its
    statuses differ from these, and ``WAITING``: the statuses in which it waits for a person rather
    than a worker. ``FINISHED`` is every status after running that is not waiting."""

    Status = job_statuses(JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)
    WAITING: frozenset[str] = frozenset()
    FINISHED: frozenset[str] = frozenset()

    status = job_status_field(Status)
    message = models.TextField(_("message"), blank=True)
    created_at = models.DateTimeField(_("requested at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)  # when a worker first took it
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.FINISHED = frozenset(cls.Status.values) - {JobStatus.QUEUED, JobStatus.RUNNING} - cls.WAITING

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def settled(self) -> bool:
        """Nothing more happens without a person: finished, or waiting for one (a page stops polling)."""
        return self.finished or self.status in self.WAITING


class WorkerPing(Job):
    """A round trip through the broker to a worker, as proof the pipeline runs: queued, taken by a
    worker (running), answered (done)."""

    Status = job_statuses(JobStatus.DONE)

    status = job_status_field(Status)
    message = None
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    worker = models.CharField(max_length=200, blank=True)

    @property
    def round_trip_ms(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.created_at).total_seconds() * 1000
