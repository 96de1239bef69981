"""Template context shared by every page."""

from apps.core.operations import degraded_reasons


def degraded_mode(request):
    """What keeps judgments from running now, for the banner in base.html (signed-in users only)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"degraded_reasons": degraded_reasons()}
