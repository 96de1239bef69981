from django.db import transaction

from apps.accounts.models import Role, Team, User


@transaction.atomic
def user_create(*, username: str, password: str, roles: list[str], teams: list[Team] = (), **fields) -> User:
    unknown = set(roles) - set(Role.values)
    if unknown:
        raise ValueError(f"unknown roles: {sorted(unknown)}")
    user = User(username=username, roles=list(roles), **fields)
    # Admins manage the corpus through Django's admin site.
    user.is_staff = Role.ADMIN in roles
    user.set_password(password)
    user.save()
    user.teams.set(teams)
    return user
