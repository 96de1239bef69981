"""Read-side queries for the graph pages (statistics and the explorer)."""

from __future__ import annotations

import re

from django.core.paginator import Paginator
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import get_language

from apps.core.caching import cached, derived_key
from apps.core.params import int_param
from apps.corpus.models import Article, Charge, Interpretation, Precedent
from apps.graph import age
from apps.graph.labels import NODE_COLOURS, legend, node_label, relation_label
from worker.agents.wording import kind_named, term_wording
from apps.graph.models import Community, GraphBuild
from apps.graph.services.projection import expected_counts

NEIGHBOURHOOD_PAGE = 100  # neighbours per page of the explorer (its table and its drawing)
_ARTICLE_KEY = re.compile(r"^(\d+)(?:-(\d+))?$")


# The statistics are counted again at least this often, whatever the generation says (a change made
# past the services that advance it: an edit in the Django admin).
STATISTICS_MAX_AGE_S = 300


def graph_counts() -> dict:
    """Rows per label in the tables (the source of truth) and in the AGE graph, and the communities:
    counted once per generation of the corpus and graph (apps/core/caching.py; a graph build counts
    them when it finishes, a sync or an import makes the next read count again), at most
    STATISTICS_MAX_AGE_S old."""
    def count() -> dict:
        return {"graph": age.label_counts() if age.graph_exists() else {}, "tables": expected_counts(),
                "communities": Community.objects.count()}

    return cached(derived_key("graph-counts"), count, timeout=STATISTICS_MAX_AGE_S)


def graph_statistics() -> dict:
    counts = graph_counts()
    actual = counts["graph"]
    rows = [{"label": label, "caption": node_label(label) if label in NODE_COLOURS else relation_label(label),
             "relational": n, "graph": actual.get(label, 0), "ok": actual.get(label, 0) == n}
            for label, n in counts["tables"].items()]
    return {"rows": rows, "consistent": all(r["ok"] for r in rows), "build": GraphBuild.objects.first(),
            "communities": counts["communities"]}


def graph_lookup(query: str) -> tuple[str, int] | None:
    """Resolve a search box entry to (label, pk): a case id, an article (264, 133-1, 第二百六十四条), C<n> or a charge."""
    query = query.strip()
    if not query:
        return None
    if (case := Precedent.objects.filter(ext_id=query).only("pk").first()) is not None:
        return "Case", case.pk
    if (m := _ARTICLE_KEY.match(query)) and int_param(m[1], maximum=2**31 - 1) is not None \
            and int_param(m[2] or "0", maximum=2**31 - 1) is not None:
        article = Article.objects.filter(number=int(m[1]), sub=int(m[2] or 0), law__title="中华人民共和国刑法").first()
        if article:
            return "Article", article.pk
    if (article := Article.objects.filter(label=query).first()) is not None:
        return "Article", article.pk
    if query[:1] in "Cc" and int_param(query[1:], maximum=2**31 - 1) is not None:
        community = Community.objects.filter(number=int_param(query[1:]), level=0).first()
        if community:
            return "Community", community.pk
    if (charge := Charge.objects.filter(name=query).first()) is not None:
        return "Offence", charge.pk
    if (interp := Interpretation.objects.filter(ext_id=query).only("pk").first()) is not None:
        return "Interpretation", interp.pk
    return None


def _caption(props: dict) -> str:
    kind = props.get("kind")
    if kind == "case":
        return props.get("ext_id", "")
    if kind == "article":
        return props.get("label", "")
    if kind == "community":
        return f"C{props.get('number')} ({props.get('size')})"
    if kind == "checklist_item":
        return props.get("question", "")[:24]
    return str(props.get("name") or props.get("ext_id") or props.get("pk"))


def _lookup_text(props: dict) -> str:
    """What to type in the explorer's search box to move to this vertex ('' if it cannot be looked up)."""
    kind = props.get("kind")
    return {"case": props.get("ext_id"), "article": props.get("label"), "offence": props.get("name"),
            "community": f"C{props.get('number')}", "interpretation": props.get("ext_id")}.get(kind) or ""


# What a neighbour is sorted by within its relation (the property its caption shows).
_SORT_PROPERTY = {"Case": "ext_id", "Article": "label", "Offence": "name", "Feature": "name", "Community": "number",
                  "Interpretation": "ext_id", "ChecklistItem": "question"}


def _neighbour_groups(label: str) -> list[tuple[str, str, str]]:
    """(relation, direction 'out' or 'in', label of the other end) of every edge type that can touch ``label``."""
    from apps.graph.services.projection import EDGES

    groups = []
    for spec in EDGES:
        if spec.start == label:
            groups.append((spec.label, "out", spec.end))
        if spec.end == label:
            groups.append((spec.label, "in", spec.start))
    return groups


def _group_pattern(label: str, relation: str, direction: str, other: str) -> str:
    return (f"MATCH (n:{label})-[r:{relation}]->(m:{other})" if direction == "out"
            else f"MATCH (m:{other})-[r:{relation}]->(n:{label})")


class Neighbours:
    """The one-hop neighbours of a vertex as a sliceable sequence for Django's Paginator: counted
    per edge type, and a page read with one typed, index-backed Cypher query per edge type it
    overlaps (an untyped ``(n)-[r]-(m)`` scans every edge table: seconds for article 264's 1,642 cases).

    Order: the smaller edge types first (the charges, interpretations and checklist of an article
    come before its hundreds of citing cases), then by relation and the neighbour's caption."""

    def __init__(self, label: str, pk: int):
        self.label, self.pk = age.check_label(label), pk
        self._groups: list[tuple[int, tuple[str, str, str]]] | None = None

    def groups(self) -> list[tuple[int, tuple[str, str, str]]]:
        """(count, edge type) of every edge type the vertex has, counted once per generation of the
        graph (apps/core/caching.py: a build, a sync or an import counts again)."""
        if self._groups is None:
            self._groups = cached(derived_key("graph-neighbour-groups", self.label, self.pk), self._count_groups)
        return self._groups

    def _count_groups(self) -> list[tuple[int, tuple[str, str, str]]]:
        counted = []
        for group in _neighbour_groups(self.label):
            (n,), = age.cypher(f"{_group_pattern(self.label, *group)} WHERE n.pk = $pk RETURN count(*)",
                               {"pk": self.pk}, columns=["n"])
            if n:
                counted.append((int(n), group))
        return sorted(counted, key=lambda g: (g[0], g[1]))

    def count(self) -> int:
        return sum(n for n, _group in self.groups())

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, window: slice) -> list[tuple[dict, dict, dict]]:
        """The neighbours in ``window``, read once per generation of the graph."""
        start, stop = window.start or 0, window.stop if window.stop is not None else self.count()
        key = derived_key("graph-neighbours", self.label, self.pk, start, stop)
        return cached(key, lambda: self._rows(start, stop))

    def _rows(self, start: int, stop: int) -> list[tuple[dict, dict, dict]]:
        rows, offset = [], 0
        for n, (relation, direction, other) in self.groups():
            lo, hi = max(start - offset, 0), min(stop - offset, n)
            if lo < hi:
                rows += age.cypher(
                    f"{_group_pattern(self.label, relation, direction, other)} WHERE n.pk = $pk "
                    f"RETURN n, r, m ORDER BY m.{_SORT_PROPERTY.get(other, 'pk')}, m.pk SKIP $skip LIMIT $limit",
                    {"pk": self.pk, "skip": lo, "limit": hi - lo}, columns=["n", "r", "m"])
            offset += n
            if offset >= stop:
                break
        return rows


def graph_neighbourhood(label: str, pk: int, *, page: str | int | None = 1,
                        per_page: int = NEIGHBOURHOOD_PAGE) -> dict:
    """One page of the neighbours of a vertex, as Cytoscape-ready elements (nodes and edges) and table rows."""
    page_obj = Paginator(Neighbours(label, pk), per_page).get_page(page)
    rows = list(page_obj.object_list)
    nodes, edges, table = {}, [], []
    for n, r, m in rows:
        table.append({"relation": r["label"], "relation_label": relation_label(r["label"]),
                      "outgoing": r["start_id"] == n["id"], "score": r["properties"].get("score"),
                      "caption": _caption(m["properties"]), "kind": m["label"], "kind_label": node_label(m["label"]),
                      "lookup": _lookup_text(m["properties"])})
        for v in (n, m):
            nodes[v["id"]] = _node(v, center=v["properties"]["pk"] == pk and v["label"] == label)
        edges.append({"id": str(r["id"]), "source": str(r["start_id"]), "target": str(r["end_id"]), "label": r["label"],
                      "caption": relation_label(r["label"]), "score": r["properties"].get("score")})
    if not rows:
        center = age.cypher(f"MATCH (n:{label}) WHERE n.pk = $pk RETURN n", {"pk": pk}, columns=["n"])
        for (v,) in center:
            nodes[v["id"]] = _node(v, center=True)
    # Sorted, so the drawing (a deterministic layout over this order) is the same on every load.
    ordered = sorted(nodes.values(), key=lambda v: (not v["center"], v["label"], v["caption"], v["pk"]))
    return {"nodes": ordered, "edges": sorted(edges, key=lambda e: (e["label"], e["source"], e["target"])),
            "rows": table, "legend": legend(v["label"] for v in ordered), "page": page_obj,
            "total": page_obj.paginator.count, "page_number": page_obj.number, "pages": page_obj.paginator.num_pages}


def _node(vertex: dict, *, center: bool) -> dict:
    props = vertex["properties"]
    lookup = _lookup_text(props)
    return {"id": str(vertex["id"]), "label": vertex["label"], "kind_label": node_label(vertex["label"]),
            "pk": props["pk"], "caption": _caption(props), "center": center,
            "colour": NODE_COLOURS.get(vertex["label"], "#333"),
            "url": f"{reverse('graph:explorer')}?{urlencode({'q': lookup})}" if lookup and not center else ""}


def _term(outcome) -> str:
    # The wording module directly: the graph app reads only the published corpus (never apps.cases, F7).
    lang = "zh" if (get_language() or "").startswith("zh") else "en"
    return term_wording(outcome.term_months, life=outcome.life, death=outcome.death, kind=kind_named(outcome.term_kind),
                        lang=lang)


def graph_node_detail(label: str, pk: int) -> dict | None:
    """What the explorer shows of the looked-up vertex itself: an article's text in force, a
    precedent's charges, term and facts, an interpretation's text, a charge's defining articles."""
    from apps.corpus.models import ArticleVersion, PrecedentOutcome

    if label == "Article":
        article = Article.objects.select_related("law").filter(pk=pk).first()
        if article is None:
            return None
        version = ArticleVersion.objects.filter(article=article, valid_to__isnull=True).order_by("-valid_from").first() \
            or ArticleVersion.objects.filter(article=article).order_by("-valid_from").first()
        return {"kind": "article", "title": article.label, "subtitle": article.law.title,
                "text": version.text if version else "", "since": version.valid_from if version else None}
    if label == "Case":
        case = Precedent.objects.filter(pk=pk).first()
        if case is None:
            return None
        outcomes = [{"defendant": o.defendant, "charges": [c.name for c in o.charges.all()],
                     "term": _term(o) if o.term_known else ""}
                    for o in PrecedentOutcome.objects.filter(precedent=case).prefetch_related("charges")
                    .order_by("position")]
        return {"kind": "case", "title": case.ext_id, "subtitle": case.get_court_level_display() if case.court_level else "",
                "text": case.fact, "outcomes": outcomes}
    if label == "Interpretation":
        interp = Interpretation.objects.filter(pk=pk).first()
        if interp is None:
            return None
        return {"kind": "interpretation", "title": f"{interp.source}{interp.para}", "subtitle": interp.ext_id,
                "text": interp.text}
    if label == "Offence":
        charge = Charge.objects.filter(pk=pk).first()
        if charge is None:
            return None
        return {"kind": "offence", "title": charge.name, "subtitle": "", "text": "",
                "articles": [a.label for a in charge.articles.order_by("number", "sub")]}
    return None
