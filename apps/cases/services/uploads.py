"""Facts documents uploaded at intake: parsed safely, stored for provenance, shown for confirmation.

The file is kept from the preview on (the user confirms the extracted text on the next page); an
upload no case was saved from is removed by ``manage.py purge_unconfirmed_uploads`` after
``LEXTRACE_UPLOAD_UNCONFIRMED_HOURS``. Upload, confirmation (case.create with the upload) and purge
are audited.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import uuid
from pathlib import PurePath

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import Team, User
from apps.accounts.selectors import team_list_for
from apps.audit.services import audit_append
from apps.cases.models import CaseUpload
from apps.cases.services.cases import MAX_FACTS_CHARS
from apps.corpus.reasons import translate_reason
from lexlib.parsing.documents import extract_text
from lexlib.parsing.errors import DocumentError

ALLOWED_SUFFIXES = (".txt", ".docx", ".pdf")
logger = logging.getLogger(__name__)


def case_upload_max_bytes() -> int:
    return int(getattr(settings, "LEXTRACE_CASE_UPLOAD_MAX_BYTES", 10 * 1024 * 1024))


@transaction.atomic
def case_upload_create(*, user: User, team: Team, data: bytes, filename: str) -> CaseUpload:
    """Extract the text of a TXT, DOCX or PDF (in a resource-limited child process) and keep the file.

    ValidationError with a reason the user can act on when the file is refused
    or unreadable; nothing is stored then.
    """
    if not team_list_for(user=user).filter(pk=team.pk).exists():
        raise ValidationError({"team": _("Choose one of your teams.")})
    name = PurePath(filename or "").name[:255] or "upload"
    if not name.lower().endswith(ALLOWED_SUFFIXES):
        raise ValidationError({"file": _("Upload the facts as TXT, DOCX or PDF.")})
    limit = case_upload_max_bytes()
    if len(data) > limit:
        message = _("The file has %(size)d bytes; the limit for a facts document is %(limit)d.")
        raise ValidationError({"file": message % {"size": len(data), "limit": limit}})
    try:
        extracted = extract_text(data, name, max_bytes=limit)
    except DocumentError as exc:
        # The parser writes its reason in English (lexlib); the user reads it in the page language.
        reason = translate_reason(exc.message)
        raise ValidationError({"file": _("The file could not be read: %(reason)s") % {"reason": reason}}) from None
    text = extracted.text.strip()
    # The case's own limit, applied now: the user should not correct a text that can never be saved.
    if len(text) > MAX_FACTS_CHARS:
        message = _("The document's text has %(n)d characters; the facts of a case may have at most %(max)d. "
                    "Upload the relevant part only.")
        raise ValidationError({"file": message % {"n": len(text), "max": MAX_FACTS_CHARS}})
    upload = CaseUpload(team=team, uploaded_by=user, filename=name, kind=extracted.kind,
                        sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data), pages=extracted.pages, text=text)
    # A generated name: the user's file name never becomes a path.
    upload.file.save(f"{uuid.uuid4().hex}.{extracted.kind}", ContentFile(data), save=False)
    try:
        upload.save()
        audit_append(action="case.upload", obj=upload, actor=user,
                     after={"team": team.pk, "kind": upload.kind, "sha256": upload.sha256, "bytes": upload.size_bytes,
                            "pages": upload.pages, "characters": len(text)})
    except BaseException:
        upload.file.delete(save=False)  # the row is rolled back; so is the file
        raise
    return upload


def unconfirmed_uploads(*, older_than: dt.timedelta, now: dt.datetime | None = None):
    """Uploads no case refers to (never confirmed, or their case was deleted), older than ``older_than``."""
    cutoff = (now or timezone.now()) - older_than
    return CaseUpload.objects.filter(created_at__lt=cutoff, cases__isnull=True).order_by("pk")


def case_uploads_purge_unconfirmed(*, older_than: dt.timedelta | None = None, dry_run: bool = False) -> list[int]:
    """Delete the unconfirmed uploads (row and file), each in its own audited transaction."""
    if older_than is None:
        older_than = dt.timedelta(hours=settings.LEXTRACE_UPLOAD_UNCONFIRMED_HOURS)
    pks = list(unconfirmed_uploads(older_than=older_than).values_list("pk", flat=True))
    if dry_run:
        return pks
    purged = []
    for pk in pks:
        with transaction.atomic():
            upload = CaseUpload.objects.select_for_update(of=("self",)).filter(pk=pk, cases__isnull=True).first()
            if upload is None:  # confirmed meanwhile
                continue
            name, view = upload.file.name, {"team": upload.team_id, "sha256": upload.sha256, "bytes": upload.size_bytes}
            upload.delete()
            audit_append(action="case.upload_purge", object_type="cases.caseupload", object_id=pk, before=view,
                         reason=f"not confirmed within {older_than.total_seconds() / 3600:g} h")
            transaction.on_commit(lambda name=name: _file_delete(name))
        purged.append(pk)
    return purged


def _file_delete(name: str) -> None:
    from django.core.files.storage import default_storage

    try:
        default_storage.delete(name)
    except OSError:
        logger.warning("could not delete the purged upload's file %s", name)
