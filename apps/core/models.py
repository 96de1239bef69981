from django.conf import settings
from django.db import models


class WorkerPing(models.Model):
    """A round trip through the broker to a worker, as proof the pipeline runs."""

    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    requested_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-requested_at"]

    @property
    def round_trip_ms(self) -> float | None:
        if self.answered_at is None:
            return None
        return (self.answered_at - self.requested_at).total_seconds() * 1000
