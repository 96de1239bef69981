from django import template

from apps.accounts.models import Role
from apps.review.models import Review
from apps.review.services.holds import hold_active

register = template.Library()


@register.inclusion_tag("review/_case_panel.html", takes_context=True)
def case_review_panel(context, case):
    """On a case's page: its legal hold (with set/release for reviewers and admins) and its runs' reviews."""
    user = context["request"].user
    return {
        "case": case, "hold": hold_active(case), "request": context["request"], "csrf_token": context.get("csrf_token"),
        "can_hold": user.has_role(Role.REVIEWER) or user.has_role(Role.ADMIN),
        "is_reviewer": user.has_role(Role.REVIEWER),
        "reviews": Review.objects.filter(run__case=case).select_related("run").order_by("-run__created_at"),
    }
