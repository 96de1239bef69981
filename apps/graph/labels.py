"""The graph's edge and vertex labels in the reader's language (the AGE labels stay English codes)."""

from django.utils.translation import gettext_lazy as _

RELATION_LABELS = {
    "CITES": _("cites"),
    "CONVICTED_OF": _("convicted of"),
    "DEFINES": _("defines"),
    "HAS_FEATURE": _("has feature"),
    "SIMILAR_TO": _("similar to"),
    "IN_COMMUNITY": _("in community"),
    "INTERPRETS": _("interprets"),
    "REFERS_TO": _("refers to"),
    "HAS_CHECK": _("checklist item"),
    # Only in a run's verified subgraph (apps.cases.evidence._graph_elements).
    "VERIFIED": _("verified for"),
    "CHARGED": _("charged with"),
}

NODE_LABELS = {
    "Case": _("precedent"),
    "Article": _("article"),
    "Offence": _("charge"),
    "Feature": _("feature"),
    "Community": _("community"),
    "Interpretation": _("interpretation"),
    "ChecklistItem": _("checklist item"),
    "Defendant": _("defendant"),
}

# One colour per vertex kind, shared by the explorer, the evidence graph and their legends.
NODE_COLOURS = {
    "Defendant": "#1d2433", "Case": "#1f4e8c", "Article": "#9a6700", "Offence": "#b3261e", "Feature": "#5f6b7a",
    "Community": "#1d7a3e", "Interpretation": "#6f42c1", "ChecklistItem": "#8c8c8c",
}


def relation_label(code: str) -> str:
    return str(RELATION_LABELS.get(code, code))


def node_label(kind: str) -> str:
    return str(NODE_LABELS.get(kind, kind))


def legend(kinds) -> list[dict]:
    """Legend rows for the vertex kinds present, in a fixed order."""
    present = set(kinds)
    return [{"kind": k, "label": node_label(k), "colour": c} for k, c in NODE_COLOURS.items() if k in present]
