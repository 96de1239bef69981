"""Refuse a request body that is too large before anything reads it (RELIABILITY G1).

Django checks the size of form fields as it parses them and our forms check a
file's size once it has arrived, by which time the whole body has been
received and spooled to a temporary file. This middleware looks only at the
declared Content-Length and answers 413 at once, so an oversized upload costs
neither disk nor the time to receive it. ``Connection: close`` tells the
server not to read the rest. (Django reads no body without a Content-Length,
so a chunked body cannot slip past it.) A proxy limit in front of gunicorn is
the first cut in production; this one holds without it.
"""

from django.conf import settings
from django.http import HttpResponse
from django.utils.translation import gettext as _


class RequestSizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = -1
        if declared < 0 or declared > settings.LEXTRACE_MAX_REQUEST_BODY_BYTES:
            response = HttpResponse(_("The request is too large."), status=413 if declared > 0 else 400,
                                    content_type="text/plain; charset=utf-8")
            response["Connection"] = "close"
            return response
        return self.get_response(request)


# --- request inputs that no view can store or look up --------------------------------------------

_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _has_nul(query_dict) -> bool:
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in query_dict.lists())


class RequestInputMiddleware:
    """Answers 400 to a NUL character in a query parameter or form field, and 404 to an id in the
    path beyond PostgreSQL's bigint, before any view passes them to the database (which refuses
    both with an error, a 500). The checks are here, once, so a new view or parameter is covered.

    Placed after CsrfViewMiddleware: the form is parsed only once its token has been checked.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if _has_nul(request.GET) or "\x00" in request.path:
            return _bad_request()
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        from django.http import Http404

        from apps.core.params import ID_MAX

        # PostgreSQL's bigint: an id beyond it cannot name a row (the database would raise "out of range").
        for value in list(view_args) + list(view_kwargs.values()):
            if isinstance(value, int) and not 0 <= value <= ID_MAX:
                raise Http404
        if request.method == "POST" and request.content_type in _FORM_TYPES and _has_nul(request.POST):
            return _bad_request()
        return None


def _bad_request():
    return HttpResponse(_("The request holds a character that is not allowed (NUL)."), status=400,
                        content_type="text/plain; charset=utf-8")


class NoStoreMiddleware:
    """``Cache-Control: private, no-store`` on every response that sets no policy of its own: case
    files, runs, evidence bundles, reviews, memos and API answers must stay out of shared and
    browser caches (static files are served before this, with their own long-lived headers)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not response.has_header("Cache-Control"):
            response["Cache-Control"] = "private, no-store"
        return response
