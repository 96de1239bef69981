import time

from django.conf import settings
from django.contrib.auth import logout

# Session keys: when the user logged in, and when they last did something.
AUTH_AT = "_lextrace_auth_at"
SEEN_AT = "_lextrace_seen_at"


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
            elif _is_activity(request):
                session[SEEN_AT] = now
        return self.get_response(request)
