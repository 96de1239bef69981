"""Facts documents uploaded at intake: parsed safely, stored for provenance, shown for confirmation."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import PurePath

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils.translation import gettext as _

from apps.accounts.models import Team, User
from apps.accounts.selectors import team_list_for
from apps.cases.models import CaseUpload
from apps.corpus.parsing.documents import extract_text
from apps.corpus.parsing.errors import DocumentError

ALLOWED_SUFFIXES = (".txt", ".docx", ".pdf")


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
        # The parser's reason (English, from apps.corpus) names what is wrong with the file.
        raise ValidationError({"file": _("The file could not be read: %(reason)s") % {"reason": exc.message}}) from None
    upload = CaseUpload(team=team, uploaded_by=user, filename=name, kind=extracted.kind,
                        sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data), pages=extracted.pages,
                        text=extracted.text.strip())
    # A generated name: the user's file name never becomes a path.
    upload.file.save(f"{uuid.uuid4().hex}.{extracted.kind}", ContentFile(data), save=False)
    upload.save()
    return upload
