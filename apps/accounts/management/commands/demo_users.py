from django.core.management.base import BaseCommand, CommandError

from apps.accounts.demo import DEMO_PASSWORD, demo_users_ensure


class Command(BaseCommand):
    help = "Create the demo teams and one demo user per role (idempotent)."

    def handle(self, *args, **options):
        try:
            users = demo_users_ensure()
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        for username, roles in users:
            self.stdout.write(f"  {username:<10} password {DEMO_PASSWORD}   roles: {', '.join(roles)}")
