from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

ALLOWED_SUFFIXES = (".jsonl", ".json", ".txt", ".docx", ".pdf")


class ImportForm(forms.Form):
    file = forms.FileField(label=_("File"), help_text=_("JSONL (statutes, interpretations, checklists, cases), JSON charge tables, or a statute as TXT/DOCX/PDF"))
    law_title = forms.CharField(label=_("Law title"), required=False, max_length=200,
                                help_text=_("Needed for a plain-text, DOCX or PDF statute"))
    amendment = forms.BooleanField(label=_("Changed article texts are amendments"), required=False,
                                   help_text=_("Adds new versions from each article's valid_from instead of rejecting the change"))

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.LEXTRACE_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(_("The file is too large (%(size)d bytes; limit %(limit)d).") % {"size": upload.size, "limit": settings.LEXTRACE_MAX_UPLOAD_BYTES})
        if not upload.name.lower().endswith(ALLOWED_SUFFIXES):
            raise forms.ValidationError(_("Unsupported file type. Use one of: %(types)s") % {"types": ", ".join(ALLOWED_SUFFIXES)})
        return upload
