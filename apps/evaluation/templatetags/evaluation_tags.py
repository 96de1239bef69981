from django import template

register = template.Library()


@register.filter
def pct(value) -> str:
    """A 0..1 fraction as a percentage with one decimal; — when not scored."""
    return "—" if value is None or value == "" else f"{100 * float(value):.1f}%"


@register.filter
def num(value) -> str:
    if value is None or value == "":
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


@register.filter
def signed(value) -> str:
    return "" if value is None else f"{value:+.4f}"


@register.filter
def status_text(value) -> str:
    """A record's status code (judged, no_evidence, …) in the page language."""
    from apps.evaluation.selectors import status_label

    return status_label(str(value))
