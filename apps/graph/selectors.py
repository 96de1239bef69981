"""Read-side queries for the graph pages (statistics and the explorer)."""

from __future__ import annotations

import re

from apps.core.params import int_param
from apps.corpus.models import Article, Charge, Precedent
from apps.graph import age
from apps.graph.models import Community, GraphBuild
from apps.graph.services.projection import expected_counts

NEIGHBOURHOOD_LIMIT = 150
_ARTICLE_KEY = re.compile(r"^(\d+)(?:-(\d+))?$")


def graph_statistics() -> dict:
    actual = age.label_counts() if age.graph_exists() else {}
    expected = expected_counts()
    rows = [{"label": label, "relational": n, "graph": actual.get(label, 0), "ok": actual.get(label, 0) == n}
            for label, n in expected.items()]
    return {"rows": rows, "consistent": all(r["ok"] for r in rows), "build": GraphBuild.objects.first(),
            "communities": Community.objects.count()}


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
            "community": f"C{props.get('number')}"}.get(kind) or ""


def graph_neighbourhood(label: str, pk: int, *, limit: int = NEIGHBOURHOOD_LIMIT) -> dict:
    """One hop around a vertex, as Cytoscape-ready elements (nodes and edges)."""
    age.check_label(label)
    rows = age.cypher(f"MATCH (n:{label})-[r]-(m) WHERE n.pk = $pk RETURN n, r, m LIMIT $limit",
                      {"pk": pk, "limit": limit}, columns=["n", "r", "m"])
    nodes, edges, table = {}, [], []
    for n, r, m in rows:
        table.append({"relation": r["label"], "outgoing": r["start_id"] == n["id"], "score": r["properties"].get("score"),
                      "caption": _caption(m["properties"]), "kind": m["label"], "lookup": _lookup_text(m["properties"])})
        for v in (n, m):
            nodes[v["id"]] = {"id": str(v["id"]), "label": v["label"], "pk": v["properties"]["pk"],
                              "caption": _caption(v["properties"]), "center": v["properties"]["pk"] == pk and v["label"] == label}
        edges.append({"id": str(r["id"]), "source": str(r["start_id"]), "target": str(r["end_id"]), "label": r["label"],
                      "score": r["properties"].get("score")})
    if not rows:
        center = age.cypher(f"MATCH (n:{label}) WHERE n.pk = $pk RETURN n", {"pk": pk}, columns=["n"])
        for (v,) in center:
            nodes[v["id"]] = {"id": str(v["id"]), "label": v["label"], "pk": pk, "caption": _caption(v["properties"]), "center": True}
    return {"nodes": list(nodes.values()), "edges": edges, "rows": table, "truncated": len(rows) >= limit}
