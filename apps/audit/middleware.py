import re
import uuid

from apps.audit.context import request_context

REQUEST_ID_HEADER = "X-Request-ID"
# An id set by our own proxy is kept so logs can be joined across hops. It is a
# correlation id, not evidence: a client can send any value that fits this shape.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{7,63}")


class RequestContextMiddleware:
    """Gives every request an id (returned as X-Request-ID) and remembers actor and IP for the audit trail.

    Placed after AuthenticationMiddleware. REMOTE_ADDR is the client address as
    the WSGI server saw it; behind a proxy, the proxy must pass the real one there.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if _SANE_REQUEST_ID.fullmatch(incoming) else str(uuid.uuid4())
        request.request_id = request_id
        with request_context(request_id=request_id, ip=request.META.get("REMOTE_ADDR", "")[:64], request=request):
            response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        return response
