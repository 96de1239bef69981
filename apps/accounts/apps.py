from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "Accounts"

    def ready(self):
        from apps.accounts import checks, signals  # noqa: F401 - registers the deploy check, connects the receivers
