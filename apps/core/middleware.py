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
