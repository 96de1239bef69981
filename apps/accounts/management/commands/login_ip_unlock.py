from django.core.management.base import BaseCommand

from apps.accounts.lockout import ip_failures, login_ip_unlock


class Command(BaseCommand):
    help = ("Lift the login lockout of an address (LEXTRACE_LOGIN_IP_FAILURE_LIMIT failed logins); audited. "
            "A (username, address) lock of django-axes is lifted in the admin site's 'Access attempts'.")

    def add_arguments(self, parser):
        parser.add_argument("ip")

    def handle(self, *args, ip, **options):
        failures = ip_failures(ip)
        if login_ip_unlock(ip=ip):
            self.stdout.write(f"{ip}: unlocked ({failures} failed logins forgotten)")
        else:
            self.stdout.write(f"{ip}: not locked ({failures} failed logins)")
