from django.db.models import QuerySet

from apps.audit.models import AuditEvent


def events_filter(*, action: str = "", object_type: str = "", object_id: str = "") -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.order_by("-seq")
    if action:
        events = events.filter(action=action)
    if object_type:
        events = events.filter(object_type=object_type)
    if object_id:
        events = events.filter(object_id=object_id)
    return events


def audit_actions() -> list[str]:
    return list(AuditEvent.objects.order_by("action").values_list("action", flat=True).distinct())
