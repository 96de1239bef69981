from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = _("Accounts")

    def ready(self):
        from apps.accounts import checks, signals  # noqa: F401 - registers the deploy check, connects the receivers
