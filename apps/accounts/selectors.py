from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.accounts.models import Team, User


def team_list_for(*, user: User) -> QuerySet[Team]:
    """Teams the user belongs to. Access is decided here, by the queryset."""
    return Team.objects.filter(members=user).order_by("name")


def team_get_for(*, user: User, pk: int) -> Team:
    """404 for a team the user is not in, so its existence is not revealed."""
    return get_object_or_404(team_list_for(user=user), pk=pk)
