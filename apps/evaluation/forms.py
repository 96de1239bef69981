from django import forms
from django.utils.translation import gettext_lazy as _

from worker.agents.names import ABLATIONS, STRATEGIES

MAX_SET_BYTES = 50 * 1024 * 1024


class EvaluationForm(forms.Form):
    file = forms.FileField(label=_("Labelled JSONL set"), help_text=_("one case per line in the corpus case schema"))
    label = forms.CharField(label=_("Label"), max_length=200, required=False)
    strategy = forms.ChoiceField(label=_("Strategy"), choices=[(s, s) for s in STRATEGIES], initial="statistical")
    ablation = forms.ChoiceField(label=_("Ablation"), choices=[(a, a) for a in ABLATIONS], initial="full")
    limit = forms.IntegerField(label=_("Only the first N cases"), min_value=1, required=False)

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_SET_BYTES:
            raise forms.ValidationError(_("The file is larger than 50 MB."))
        return upload
