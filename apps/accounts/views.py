from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.shortcuts import render
from django.utils.decorators import method_decorator

from apps.accounts.selectors import team_get_for, team_list_for


@method_decorator(login_not_required, name="dispatch")
class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    redirect_authenticated_user = True


def team_list(request):
    return render(request, "accounts/team_list.html", {"teams": team_list_for(user=request.user)})


def team_detail(request, pk: int):
    team = team_get_for(user=request.user, pk=pk)
    members = team.members.filter(is_active=True).order_by("username")
    return render(request, "accounts/team_detail.html", {"team": team, "members": members})
