import time

from django.conf import settings
from django.contrib.auth import logout

# Session keys: when the user logged in, and when they last did something.
AUTH_AT = "_lextrace_auth_at"
SEEN_AT = "_lextrace_seen_at"
# Activity is written to the session at most once a minute (a tenth of a shorter idle timeout): every
# request would otherwise save the session (an UPDATE of its row). The idle clock runs from the last
# write, so a session ends at most that much before SESSION_IDLE_SECONDS of real idleness, never after.
SEEN_AT_RESOLUTION_S = 60


def _seen_resolution() -> float:
    return min(SEEN_AT_RESOLUTION_S, settings.SESSION_IDLE_SECONDS / 10)


def _is_activity(request) -> bool:
    # htmx GETs are polls and partial refreshes: a page left open must not keep a session alive.
    return not (request.method == "GET" and request.headers.get("HX-Request") == "true")


class SessionTimeoutMiddleware:
    """Ends a session after SESSION_IDLE_SECONDS without activity, and SESSION_COOKIE_AGE after login.

    Runs after AuthenticationMiddleware and before LoginRequiredMiddleware, which then sends the
    now-anonymous request to the login page. Logout flushes the server-side session.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and hasattr(request, "session"):
            now = time.time()
            session = request.session
            auth_at = session.get(AUTH_AT)
            seen_at = session.get(SEEN_AT, auth_at)
            if auth_at is None:
                # A session from before this middleware, or a test's force_login: start the clocks now.
                session[AUTH_AT] = session[SEEN_AT] = now
            elif now - auth_at > settings.SESSION_COOKIE_AGE or now - seen_at > settings.SESSION_IDLE_SECONDS:
                logout(request)
            elif _is_activity(request) and now - seen_at >= _seen_resolution():
                session[SEEN_AT] = now
        return self.get_response(request)


class SecondFactorMiddleware:
    """Sends a signed-in reviewer or administrator who has not given the second factor to enrol or
    verify (apps/accounts/second_factor.py) before any other page; API calls get 403."""

    EXEMPT = {"accounts:otp_setup", "accounts:otp_verify", "accounts:logout", "set_language", "core:healthz",
              "core:health", "core:ping"}

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.http import HttpResponse, JsonResponse
        from django.shortcuts import redirect
        from django.urls import Resolver404, resolve, reverse
        from django.utils.http import urlencode

        from apps.accounts.second_factor import confirmed_device, second_factor_required

        user = getattr(request, "user", None)
        if user is None or not second_factor_required(user) or user.is_verified():
            return self.get_response(request)
        try:
            name = resolve(request.path_info).view_name
        except Resolver404:
            return self.get_response(request)
        if name in self.EXEMPT:
            return self.get_response(request)
        if request.path_info.startswith("/api/"):
            return JsonResponse({"detail": "Sign in with your second factor first."}, status=403)
        target = "accounts:otp_verify" if confirmed_device(user) else "accounts:otp_setup"
        url = f"{reverse(target)}?{urlencode({'next': request.get_full_path()})}"
        if request.headers.get("HX-Request") == "true":
            return HttpResponse(status=204, headers={"HX-Redirect": url})
        return redirect(url)
