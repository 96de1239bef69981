from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _

from apps.accounts.models import Role
from apps.review.services.holds import hold_active

register = template.Library()


@register.inclusion_tag("review/_case_panel.html", takes_context=True)
def case_review_panel(context, case, runs):
    """On a case's page: its legal hold (with set/release for reviewers and admins) and its runs' reviews, each with
    its standing decision and the reviewer's reason. ``runs``: the page's rows of runs, each with its review outcome
    (apps.review.selectors.review_outcomes), newest first."""
    user = context["request"].user
    return {
        "case": case, "hold": hold_active(case), "request": context["request"], "csrf_token": context.get("csrf_token"),
        "can_hold": user.has_role(Role.REVIEWER) or user.has_role(Role.ADMIN),
        "is_reviewer": user.has_role(Role.REVIEWER),
        "reviews": [row["review"] for row in runs if row["review"]],
    }


@register.simple_tag(takes_context=True)
def review_control(context, c: dict, oob: bool = False):
    """One accept/override control, built in Python rather than included as a template: the review
    page shows one per evidence item, article and checklist verdict, and as an included template they were a
    quarter of the page's time (docs/PERFORMANCE.md, P8). The forms post normally without JavaScript; with htmx
    they swap this control, the what-if and the coverage in place (hx-swap-oob) without a reload."""
    return render_control(c, context.get("rv") or {}, str(context.get("csrf_token") or ""), context.get("run"), oob=oob)


def render_control(c: dict, rv: dict, csrf: str, run, *, oob: bool = False) -> str:
    item = c.get("item")
    state = c.get("state") or "open"
    head = format_html('<div class="review-control" id="{}" data-target="{}" data-ref="{}" data-state="{}"{}>',
                       c["dom_id"], c["target"], c["ref"], state, format_html(' hx-swap-oob="{}"', "true") if oob else "")
    parts = []
    if item:
        if c.get("state") == "accept":
            shown = "✓ " + (_("accepted with the rest") if item.bulk else _("accepted"))
        else:
            shown = f"{_('overridden')}: {c.get('value_label', '')}"
        parts.append(format_html('<span class="badge review-{}">{}</span>', c.get("state", ""), shown))
        if item.reason:
            parts.append(format_html(' <span class="review-reason">{}</span>', item.reason))
        parts.append(format_html(' <span class="muted">— {}</span>', item.actor.username if item.actor else ""))
    if rv.get("editable"):
        token = format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">', csrf)
        common = format_html('<input type="hidden" name="target" value="{}"><input type="hidden" name="ref" value="{}">',
                             c["target"], c["ref"])
        version = format_html('<input type="hidden" name="version" value="{}">', rv.get("version", ""))
        anchor = format_html('<input type="hidden" name="anchor" value="{}">', c.get("anchor", ""))
        if not item:
            url = rv.get("item_set_url", "")
            position = format_html('<input type="hidden" name="position" value="{}">', rv.get("position", ""))
            parts.append(format_html(
                '<form method="post" action="{0}" class="inline" hx-post="{0}" hx-swap="none">{1}{2}{3}{4}{5}'
                '<input type="hidden" name="action" value="accept"><button type="submit" class="small review-accept">{6}'
                '</button></form>', url, token, common, position, version, anchor, _("Accept")))
            parts.append(format_html(
                '<details class="override"><summary>{0}</summary><form method="post" action="{1}" hx-post="{1}" '
                'hx-swap="none">{2}{3}{4}{5}{6}<input type="hidden" name="action" value="override">'
                '<input type="hidden" name="value" value="{7}"><p>{8}: <strong>{9}</strong></p><label>{10}'
                '<textarea name="reason" required maxlength="2000" rows="3"></textarea></label>'
                '<button type="submit" class="small">{11}</button></form></details>',
                _("Override"), url, token, common, position, version, anchor, "1" if c.get("offer") else "0",
                _("Set to"), c.get("offer_label", ""), _("Reason (required)"), _("Override and re-adjudicate")))
        else:
            url = reverse("review:item_undo", args=[run.pk, item.pk])
            parts.append(format_html(
                '<form method="post" action="{0}" class="inline" hx-post="{0}" hx-swap="none">{1}{2}{3}{4}'
                '<button type="submit" class="small secondary">{5}</button></form>',
                url, token, version, anchor, common, _("Undo")))
    return format_html("{}{}</div>", head, format_html_join("", "{}", ((p,) for p in parts)))
