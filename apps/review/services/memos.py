"""Exporting the memo of an approved run, audited: who took which run's memo, in which format,
bound to which approval (its snapshot hash)."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.http import Http404
from django.utils.translation import gettext as _

from apps.audit.services import audit_append
from apps.review import memo
from apps.review.services.reviews import _require_reviewer, approval_valid

FORMATS = {"docx": memo.DOCX_TYPE, "pdf": "application/pdf"}


class NoRenderer(Exception):
    """No PDF renderer is installed on this server."""


def memo_export(*, review, fmt: str, user, request=None) -> tuple[bytes, str]:
    """The memo as (content, content type). Http404 for an unknown format or a run without a valid
    approval; NoRenderer when a PDF cannot be printed here."""
    _require_reviewer(user)
    if fmt not in FORMATS:
        raise Http404
    # Read only: a changed record makes the approval not valid here; invalidating it is a POST's job.
    if (approval := approval_valid(review)) is None:
        raise Http404(_("Only an approved run with a valid approval can be exported."))
    content = memo.memo_docx(review) if fmt == "docx" else memo.memo_pdf(review, request=request)
    if content is None:
        raise NoRenderer(_("No PDF renderer is installed on this server; download the DOCX memo."))
    with transaction.atomic():
        audit_append(action="review.memo_export", obj=review, actor=user,
                     after={"run": review.run_id, "format": fmt, "approval": approval.pk,
                            "snapshot_sha256": approval.snapshot_sha256,
                            "sha256": hashlib.sha256(content).hexdigest(), "bytes": len(content)})
    return content, FORMATS[fmt]
