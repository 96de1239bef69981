"""Demo teams and one user per role, for `make demo` and manual testing."""

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Role, Team, User
from apps.accounts.services import user_create

DEMO_PASSWORD = "lextrace-demo"
DEMO_USERS = [
    # username, roles, teams, display name
    ("clerk_a", [Role.STAFF], ["Team A · 刑事一庭"], "Clerk A"),
    ("clerk_b", [Role.STAFF], ["Team B · 刑事二庭"], "Clerk B"),
    ("reviewer", [Role.REVIEWER], ["Team A · 刑事一庭", "Team B · 刑事二庭"], "Reviewer"),
    ("admin", [Role.ADMIN], [], "Administrator"),
]


@transaction.atomic
def demo_users_ensure() -> list[tuple[str, list[str]]]:
    if settings.HTTPS:
        raise RuntimeError("refusing to create demo users with a known password on an HTTPS (production) deployment")
    created = []
    for username, roles, team_names, display in DEMO_USERS:
        teams = [Team.objects.get_or_create(name=n)[0] for n in team_names]
        if not User.objects.filter(username=username).exists():
            user_create(username=username, password=DEMO_PASSWORD, roles=roles, teams=teams, first_name=display)
        created.append((username, roles))
    return created
