"""The audit trail: one hash-chained, append-only table (INV-5).

The table, its constraints and its triggers are written in SQL in
migrations/0001_initial.py. The model is unmanaged for one reason: Django's
test flush (TransactionTestCase) TRUNCATEs every managed table, and the
append-only trigger refuses TRUNCATE. Unmanaged keeps audit_event out of the
flush; everything else (queries, admin) works as usual.
"""

import json

from django.db import models
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext_lazy as _

from lexlib.canonical import epoch_micros, event_content, event_hash

# Epoch microseconds as PostgreSQL computes them: exact, and independent of the
# session TimeZone (unlike a datetime loaded through Django).
STORED_AT_US = RawSQL('(EXTRACT(EPOCH FROM "audit_event"."at") * 1000000)::bigint', [])


class AuditEvent(models.Model):
    # Gap-free, assigned by audit_append under an advisory lock; also the primary key,
    # so an insert-only role needs no sequence privilege.
    seq = models.BigIntegerField(primary_key=True)
    at = models.DateTimeField(_("time"))
    # No foreign key: deleting a user must neither cascade into nor be blocked by the trail.
    actor_id = models.BigIntegerField(null=True, blank=True)
    actor_username = models.TextField(_("actor"), blank=True)
    role = models.TextField(_("role"), blank=True)
    request_id = models.TextField(_("request id"), blank=True)
    ip = models.TextField(_("IP address"), blank=True)
    action = models.TextField(_("action"))
    object_type = models.TextField(_("object type"), blank=True)
    object_id = models.TextField(_("object id"), blank=True)
    before = models.JSONField(_("before"), null=True, blank=True)
    after = models.JSONField(_("after"), null=True, blank=True)
    reason = models.TextField(_("reason"), blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        managed = False
        db_table = "audit_event"
        ordering = ["-seq"]
        verbose_name = _("audit event")
        verbose_name_plural = _("audit events")

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} {self.object_type}:{self.object_id}"

    def content(self, *, at_us: int | None = None) -> dict:
        """The hashed content; ``at_us`` from the database when verifying (STORED_AT_US), else from ``at``."""
        return event_content(seq=self.seq, at_us=epoch_micros(self.at) if at_us is None else at_us,
                             actor_id=self.actor_id, actor_username=self.actor_username, role=self.role,
                             request_id=self.request_id, ip=self.ip, action=self.action, object_type=self.object_type,
                             object_id=self.object_id, before=self.before, after=self.after, reason=self.reason)

    def compute_hash(self, *, at_us: int | None = None) -> str:
        return event_hash(self.prev_hash, self.content(at_us=at_us))

    @property
    def before_text(self) -> str:
        return "" if self.before is None else json.dumps(self.before, ensure_ascii=False, sort_keys=True)

    @property
    def after_text(self) -> str:
        return "" if self.after is None else json.dumps(self.after, ensure_ascii=False, sort_keys=True)


class AuditRowChange(models.Model):
    """A write to a reviewed table as its row trigger saw it (migrations/0002_row_changes.py):
    captured however the write was made, services or not. Unmanaged for the same reason as AuditEvent."""

    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField()
    txid = models.BigIntegerField()
    db_user = models.TextField()
    tbl = models.TextField()
    op = models.TextField()
    row_id = models.TextField()
    old = models.JSONField(null=True)
    new = models.JSONField(null=True)

    class Meta:
        managed = False
        db_table = "audit_row_change"
        ordering = ["id"]
