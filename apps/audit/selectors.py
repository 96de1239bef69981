from django.db.models import QuerySet
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

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


def audit_object_types() -> list[str]:
    return list(AuditEvent.objects.order_by("object_type").values_list("object_type", flat=True).distinct())


def audit_actions() -> list[str]:
    return list(AuditEvent.objects.order_by("action").values_list("action", flat=True).distinct())


# Audit actions in the reader's language (an action not listed is shown as its code).
ACTION_LABELS = {
    "case.create": _("case filed"), "case.update": _("case edited"), "case.delete": _("case deleted"),
    "case.purge": _("case purged (retention)"), "case.hold": _("legal hold set"),
    "case.hold_release": _("legal hold released"), "run.request": _("judgment run started"),
    "run.retry": _("judgment run retried"), "review.assign": _("review assigned"),
    "review.accept": _("evidence accepted"), "review.override": _("evidence overridden"),
    "review.undo": _("acceptance or override withdrawn"), "review.accept_rest": _("remaining articles accepted"),
    "review.approve": _("run approved"), "review.reject": _("run rejected"), "review.return": _("run returned to staff"),
    "review.denied": _("refused (four-eyes rule)"), "review.invalidate": _("approval invalidated"),
    "corpus.import": _("corpus imported"), "model.activate": _("model activated"),
    "accounts.user_create": _("user created"), "accounts.user_update": _("user changed"),
    "accounts.user_delete": _("user deleted"), "accounts.password_set": _("password set by an administrator"),
    "accounts.team_create": _("team created"), "accounts.team_update": _("team changed"),
    "accounts.team_delete": _("team deleted"), "accounts.login_locked_out": _("sign-in locked"),
    "accounts.login_unlocked": _("sign-in lock lifted"), "auth.otp_enrolled": _("authenticator enrolled"),
    "auth.otp_verified": _("second factor given"), "auth.otp_refused": _("second factor refused"),
    "review.open": _("judgment opened by the reviewer"), "review.memo_export": _("memo exported"),
    "run.cancel": _("judgment run cancelled"), "api_token.mint": _("API token issued"),
    "api_token.revoke": _("API token revoked"), "api_token.refused": _("expired or revoked API token refused"),
    "case.upload": _("document uploaded"), "case.upload_confirm": _("uploaded document filed as a case"),
    "case.upload_purge": _("unconfirmed upload deleted"), "corpus.import_failed": _("corpus import refused"),
    "corpus.import_duplicate": _("corpus import skipped (already imported)"),
    "corpus.import_confirm": _("checked corpus import confirmed"), "corpus.import_discard": _("checked corpus import discarded"),
    "accounts.login_ip_locked_out": _("sign-ins from an address locked"),
    "accounts.login_ip_unlocked": _("sign-in lock of an address lifted"),
}


OBJECT_LABELS = {
    "cases.case": _("case file"), "cases.judgmentrun": _("judgment run"), "review.review": _("review"),
    "corpus.importbatch": _("corpus import"), "registry.modelversion": _("model version"), "accounts.user": _("user"),
    "accounts.team": _("team"), "accounts.login": _("sign-in"), "cases.caseupload": _("uploaded document"),
    "accounts.apitoken": _("API token"),
}


def object_label(object_type: str) -> str:
    return str(OBJECT_LABELS.get(object_type, object_type))


def role_labels(roles: str) -> str:
    from apps.accounts.models import Role

    return "、".join(str(Role(r).label) if r in Role.values else r for r in (roles or "").split(",") if r)


def action_label(action: str) -> str:
    return str(ACTION_LABELS.get(action, action))


def _short(value) -> str:
    if isinstance(value, (list, tuple)):
        return "、".join(_short(v) for v in value) or "—"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_short(v)}" for k, v in sorted(value.items()))
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    text = str(value)
    return text if len(text) <= 24 or " " in text else text[:12] + "…"  # hashes: their head identifies them


def event_changes(event: AuditEvent) -> list[dict]:
    """An event's before/after as rows a reader can scan: field, before, after (changed fields first)."""
    before = event.before if isinstance(event.before, dict) else ({} if event.before is None else {"": event.before})
    after = event.after if isinstance(event.after, dict) else ({} if event.after is None else {"": event.after})
    keys = sorted(set(before) | set(after), key=lambda k: (before.get(k) == after.get(k), k))
    return [{"field": k, "before": _short(before[k]) if k in before else "", "after": _short(after[k]) if k in after else "",
             "changed": before.get(k) != after.get(k)} for k in keys]
