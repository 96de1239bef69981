from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from apps.corpus.models import ImportBatch

ALLOWED_SUFFIXES = (".jsonl", ".json", ".txt", ".docx", ".pdf")


class ImportForm(forms.Form):
    file = forms.FileField(label=_("File"), help_text=_("JSONL (statutes, interpretations, checklists, cases), JSON charge tables, CAIL2018 or LeCaRD JSON, or a judgment or statute as TXT/DOCX/PDF"))
    format = forms.ChoiceField(label=_("Format"), required=False, initial="auto",
                               choices=[("auto", _("Detect it (when unambiguous)")), *ImportBatch.Format.choices])
    law_title = forms.CharField(label=_("Law title"), required=False, max_length=200,
                                help_text=_("Needed for a plain-text, DOCX or PDF statute"))
    effective_date = forms.DateField(label=_("Effective date"), required=False,
                                     widget=forms.DateInput(attrs={"type": "date"}),
                                     help_text=_("Statute text: the day the amended text takes effect. Changed articles get a new version from that day, superseding the one in force"))
    version_label = forms.CharField(label=_("Version"), required=False, max_length=200,
                                    help_text=_("Statute text: e.g. 刑法修正案（十一）, kept with each new version"))
    source = forms.CharField(label=_("Source label"), required=False, max_length=60,
                             help_text=_("CAIL2018: the precedents' source (default cail2018)"))
    amendment = forms.BooleanField(label=_("Changed article texts are amendments"), required=False,
                                   help_text=_("Adds new versions from each article's valid_from instead of rejecting the change"))
    skip_refused = forms.BooleanField(label=_("Publish without the refused records"), required=False,
                                      help_text=_("Off: one refused record stops the whole file. On: the others are published and the refused ones are listed"))

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.LEXTRACE_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(_("The file is too large (%(size)d bytes; limit %(limit)d).") % {"size": upload.size, "limit": settings.LEXTRACE_MAX_UPLOAD_BYTES})
        if not upload.name.lower().endswith(ALLOWED_SUFFIXES):
            raise forms.ValidationError(_("Unsupported file type. Use one of: %(types)s") % {"types": ", ".join(ALLOWED_SUFFIXES)})
        return upload

    def clean(self):
        data = super().clean()
        if data.get("format") == ImportBatch.Format.STATUTE_TXT and not (data.get("law_title") or "").strip():
            self.add_error("law_title", _("A statute text needs the law's title."))
        return data
