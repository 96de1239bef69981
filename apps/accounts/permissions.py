from functools import wraps

from django.core.exceptions import PermissionDenied


def role_required(*roles: str):
    """View decorator: the logged-in user must hold at least one of ``roles``."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not any(request.user.has_role(r) for r in roles):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator
