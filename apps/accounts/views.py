from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from apps.accounts.forms import LoginForm
from apps.accounts.selectors import team_get_for, team_list_for


@method_decorator(login_not_required, name="dispatch")
class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True


def team_list(request):
    return render(request, "accounts/team_list.html", {"teams": team_list_for(user=request.user)})


def team_detail(request, pk: int):
    team = team_get_for(user=request.user, pk=pk)
    members = team.members.filter(is_active=True).order_by("username")
    return render(request, "accounts/team_detail.html", {"team": team, "members": members})


_OTP_ERRORS = {
    "wrong": lambda: _("That code is not valid. Enter the current six-digit code from your authenticator app."),
    "throttled": lambda: _("Too many wrong codes. Wait a little, then try again with a new code."),
    "no_device": lambda: _("No authenticator is registered for you yet."),
}


def _next_url(request) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return "/"


def _code_page(request, template: str, check, context=None):
    """GET shows the code form; POST checks the code with ``check`` and goes on to ``next`` when it passes."""
    error = ""
    if request.method == "POST":
        ok, reason = check(request, request.POST.get("token", ""))
        if ok:
            return redirect(_next_url(request))
        error = _OTP_ERRORS[reason]()
    context = {**(context() if context else {}), "error": error, "next": _next_url(request)}
    return render(request, template, context, status=400 if error else 200)


@never_cache
def otp_setup(request):
    from apps.accounts import second_factor

    if second_factor.confirmed_device(request.user):
        return redirect("accounts:otp_verify")

    def key():
        device = second_factor.enrolment_device(request.user)
        return {"key": second_factor.display_key(device), "config_url": device.config_url}

    return _code_page(request, "accounts/otp_setup.html", second_factor.enrolment_confirm, key)


@never_cache
def otp_verify(request):
    from apps.accounts import second_factor

    if not second_factor.confirmed_device(request.user):
        return redirect("accounts:otp_setup")
    return _code_page(request, "accounts/otp_verify.html", second_factor.second_factor_verify)
