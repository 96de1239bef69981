from django import forms
from django.core.validators import MaxValueValidator
from django.utils.translation import gettext_lazy as _

from apps.accounts.selectors import team_list_for
from apps.cases.models import JudgmentRun
from apps.cases.selectors import CASE_STATUS_NONE
from apps.cases.services.cases import defendants_parse
from apps.cases.services.runs import ablation_options, mode_options, strategy_options
from apps.cases.services.uploads import ALLOWED_SUFFIXES

_DATE = forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")


class _DefendantsField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 3})

    def to_python(self, value):
        return defendants_parse(super().to_python(value))


class CaseForm(forms.Form):
    """Intake: the facts as text, or a TXT/DOCX/PDF whose text is shown for confirmation first."""

    team = forms.ModelChoiceField(label=_("Team"), queryset=None, empty_label=None)
    title = forms.CharField(label=_("Title"), max_length=200, required=False,
                            help_text=_("Optional; the start of the facts is used when empty."))
    offence_date = forms.DateField(label=_("Offence date"), widget=_DATE,
                                   help_text=_("Articles are applied in the version in force on this day."))
    defendants = _DefendantsField(label=_("Defendants"), max_length=5000,
                                  help_text=_("One name per line (or separated by commas or 、)."))
    facts = forms.CharField(label=_("Facts"), required=False, widget=forms.Textarea(attrs={"rows": 12}))
    file = forms.FileField(label=_("…or upload the facts"), required=False,
                           help_text=_("TXT, DOCX or PDF. The extracted text is shown for you to check "
                                       "before the case is saved."),
                           widget=forms.ClearableFileInput(attrs={"accept": ",".join(ALLOWED_SUFFIXES)}))
    upload = forms.IntegerField(required=False, widget=forms.HiddenInput)
    confirm = forms.BooleanField(label=_("Save as entered"), required=False,
                                 help_text=_("I have checked the findings above and the case is right as entered."))

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = team_list_for(user=user)

    def clean(self):
        data = super().clean()
        if not (data.get("facts") or "").strip() and not data.get("file"):
            self.add_error("facts", _("Enter the facts of the case or upload a document."))
        return data


class CaseEditForm(forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200, required=False)
    offence_date = forms.DateField(label=_("Offence date"), widget=_DATE)
    defendants = _DefendantsField(label=_("Defendants"), max_length=5000,
                                  help_text=_("One name per line (or separated by commas or 、)."))
    facts = forms.CharField(label=_("Facts"), widget=forms.Textarea(attrs={"rows": 14}))
    version = forms.IntegerField(widget=forms.HiddenInput)
    confirm = forms.BooleanField(label=_("Save as entered"), required=False,
                                 help_text=_("I have checked the findings above and the case is right as entered."))


class _OptionsWidget(forms.RadioSelect):
    """Radio buttons of which some are shown but cannot be chosen."""

    def __init__(self, *args, disabled=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.disabled_values = set(disabled)

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if value in self.disabled_values:
            option["attrs"]["disabled"] = True
        return option


class RunForm(forms.Form):
    """Starting a run. A clerk chooses nothing: the run uses the full pipeline. The research options
    (strategy, ablation, retrieval mode) are for administrators (``research=True``) and evaluations."""

    strategy = forms.ChoiceField(label=_("Strategy"), initial=JudgmentRun.Strategy.STATISTICAL)
    ablation = forms.ChoiceField(label=_("Ablation"), initial="full")
    mode = forms.ChoiceField(label=_("Retrieval mode"), initial=JudgmentRun.Mode.FIXED, widget=forms.RadioSelect,
                             required=False)

    DEFAULTS = {"strategy": JudgmentRun.Strategy.STATISTICAL, "ablation": "full", "mode": JudgmentRun.Mode.FIXED}

    def clean_mode(self):
        return self.cleaned_data.get("mode") or JudgmentRun.Mode.FIXED

    def __init__(self, *args, research: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.research = research
        if not research:
            for name in self.DEFAULTS:
                del self.fields[name]
            self.strategy_notes = []
            return
        options = strategy_options()
        self.strategy_notes = [o["note"] for o in options if o["note"]]
        field = self.fields["strategy"]
        field.choices = [(o["value"], o["label"]) for o in options]
        field.widget = _OptionsWidget(choices=field.choices, disabled=[o["value"] for o in options if not o["enabled"]])
        self.fields["ablation"].choices = ablation_options()
        self.fields["mode"].choices = mode_options()

    def parameters(self) -> dict:
        """strategy, ablation and mode for judgment_request: the defaults unless research options were given."""
        return {name: self.cleaned_data.get(name) or default for name, default in self.DEFAULTS.items()}


class CaseFilterForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False, max_length=200,
                        widget=forms.TextInput(attrs={"placeholder": _("facts, title or defendant")}))
    status = forms.ChoiceField(label=_("Latest run"), required=False)
    charge = forms.CharField(label=_("Charge"), required=False, max_length=100,
                             widget=forms.TextInput(attrs={"list": "charge-names"}))
    team = forms.TypedChoiceField(label=_("Team"), required=False, coerce=int, empty_value=None)
    date_from = forms.DateField(label=_("Offence from"), required=False, widget=_DATE)
    date_to = forms.DateField(label=_("Offence to"), required=False, widget=_DATE)

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["status"].choices = [("", _("any")), (CASE_STATUS_NONE, _("never run")),
                                         *JudgmentRun.Status.choices]
        self.fields["team"].choices = [("", _("all my teams")), *[(t.pk, t.name) for t in team_list_for(user=user)]]

    def filters(self) -> dict:
        """The valid filters; an invalid one is ignored rather than failing the whole list."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {name: data.get(name) for name in self.fields if data.get(name) not in (None, "")}


class ApiTokenForm(forms.Form):
    """Mint an API token: a name, a scope, a lifetime (apps/cases/services/api_tokens.py checks them)."""

    name = forms.CharField(label=_("Name"), max_length=100,
                           help_text=_("What the token is for, e.g. the script or system that uses it."))
    scope = forms.ChoiceField(label=_("Scope"), choices=[], initial="read")
    days = forms.IntegerField(label=_("Valid for (days)"), min_value=1)

    def __init__(self, *args, **kwargs):
        from apps.accounts.models import ApiToken
        from apps.cases.services.api_tokens import lifetime_days_default, lifetime_days_max

        super().__init__(*args, **kwargs)
        self.fields["scope"].choices = ApiToken.Scope.choices
        self.fields["days"].initial = lifetime_days_default()
        # Read when the form is made, not at import, so the setting can change.
        self.fields["days"].validators.append(MaxValueValidator(lifetime_days_max()))
        self.fields["days"].widget.attrs["max"] = lifetime_days_max()


class ApiTokenIssueForm(ApiTokenForm):
    """An administrator issues a token for any user (the only way for reviewers and administrators)."""

    username = forms.CharField(label=_("User"), max_length=150)

    field_order = ["username", "name", "scope", "days"]

    def clean_username(self):
        from apps.accounts.models import User

        user = User.objects.filter(username=self.cleaned_data["username"], is_active=True).first()
        if user is None:
            raise forms.ValidationError(_("No active user has this name."))
        return user
