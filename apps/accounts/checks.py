"""Deploy check: a production site running without a second factor on purpose still says so."""

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def second_factor_check(app_configs, **kwargs):
    if settings.OTP_ROLES:
        return []
    return [Warning("LEXTRACE_OTP_ROLES is empty: reviewers and administrators sign in with a password alone.",
                    hint="Set LEXTRACE_OTP_ROLES=reviewer,admin (LEXTRACE_ALLOW_NO_SECOND_FACTOR only silences "
                         "the start-up refusal).", id="accounts.W001")]
