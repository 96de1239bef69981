from django.utils import timezone

from apps.core.models import WorkerPing


def worker_ping_request(*, user=None) -> WorkerPing:
    """Record a ping and send it to a worker once the row is committed."""
    from worker.tasks import worker_ping

    ping = WorkerPing.objects.create(requested_by=user if user and user.is_authenticated else None)
    # After commit: a rolled-back request never reaches the broker, and the
    # worker never looks for a row that does not exist yet.
    worker_ping.delay_on_commit(ping.pk)
    return ping


def worker_ping_answer(*, ping_id: int, hostname: str) -> bool:
    """Mark a ping answered. Safe to run twice: only the first answer counts."""
    updated = WorkerPing.objects.filter(pk=ping_id, answered_at__isnull=True).update(
        answered_at=timezone.now(), worker=hostname[:200]
    )
    return updated == 1
