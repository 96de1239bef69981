"""Project the relational corpus and ontology into the AGE graph `hierargraph`.

A full projection drops and recreates the graph inside one transaction, so
readers see either the old graph or the new one. Incremental syncs replace the
vertices of a few cases or articles (and every edge touching them) in the
caller's transaction, so the graph never disagrees with the rows it mirrors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import transaction

from apps.core.caching import generation_bump
from apps.corpus.models import Article, Charge, ChecklistItem, Interpretation, Precedent, PrecedentOutcome
from apps.graph import age
from apps.graph.models import CaseFeatures, Community, CommunityMembership, Feature, Similarity

Pairs = Iterable[tuple[int, int, dict]]


@dataclass(frozen=True)
class VertexSpec:
    label: str
    rows: Callable[[set[int] | None], list[dict]]
    count: Callable[[], int]
    indexed: tuple[str, ...] = ("pk",)


@dataclass(frozen=True)
class EdgeSpec:
    label: str
    start: str
    end: str
    # pairs(start_pks, end_pks): edges whose start is in start_pks OR end in end_pks (None: all).
    pairs: Callable[[set[int] | None, set[int] | None], Pairs]
    count: Callable[[], int]


def _filter(qs, field_start: str, field_end: str, start_pks, end_pks):
    from django.db.models import Q

    if start_pks is None and end_pks is None:
        return qs
    cond = Q(pk__in=[])
    if start_pks:
        cond |= Q(**{f"{field_start}__in": start_pks})
    if end_pks:
        cond |= Q(**{f"{field_end}__in": end_pks})
    return qs.filter(cond)


def _pk_filter(qs, pks):
    return qs if pks is None else qs.filter(pk__in=pks)


# --- vertices ----------------------------------------------------------------

def _case_rows(pks):
    return [{"pk": p, "kind": "case", "ext_id": e, "source": s, "court_level": c}
            for p, e, s, c in _pk_filter(Precedent.objects, pks).values_list("pk", "ext_id", "source", "court_level")]


def _article_rows(pks):
    return [{"pk": a.pk, "kind": "article", "law": a.law.title, "number": a.number, "sub": a.sub, "key": a.key, "label": a.label}
            for a in _pk_filter(Article.objects.select_related("law"), pks)]


def _offence_rows(pks):
    return [{"pk": p, "kind": "offence", "name": n, "official": o}
            for p, n, o in _pk_filter(Charge.objects, pks).values_list("pk", "name", "official")]


def _feature_rows(pks):
    return [{"pk": p, "kind": "feature", "dimension": d, "name": n}
            for p, d, n in _pk_filter(Feature.objects, pks).values_list("pk", "dimension", "name")]


def _community_rows(pks):
    return [{"pk": p, "kind": "community", "level": lv, "number": n, "size": s, "summary": sm}
            for p, lv, n, s, sm in _pk_filter(Community.objects, pks).values_list("pk", "level", "number", "size", "summary")]


def _interpretation_rows(pks):
    return [{"pk": p, "kind": "interpretation", "ext_id": e, "source": s, "para": para}
            for p, e, s, para in _pk_filter(Interpretation.objects, pks).values_list("pk", "ext_id", "source", "para")]


def _checklist_rows(pks):
    return [{"pk": p, "kind": "checklist_item", "version_pk": v, "variant": var, "order": o, "question": q}
            for p, v, var, o, q in _pk_filter(ChecklistItem.objects, pks).values_list("pk", "article_version_id", "variant", "order", "question")]


VERTICES = [
    VertexSpec("Case", _case_rows, lambda: Precedent.objects.count(), ("pk", "ext_id")),
    VertexSpec("Article", _article_rows, lambda: Article.objects.count()),
    VertexSpec("Offence", _offence_rows, lambda: Charge.objects.count(), ("pk", "name")),
    VertexSpec("Feature", _feature_rows, lambda: Feature.objects.count()),
    VertexSpec("Community", _community_rows, lambda: Community.objects.count()),
    VertexSpec("Interpretation", _interpretation_rows, lambda: Interpretation.objects.count()),
    VertexSpec("ChecklistItem", _checklist_rows, lambda: ChecklistItem.objects.count()),
]


# --- edges -------------------------------------------------------------------

def _cites(start_pks, end_pks):
    qs = _filter(PrecedentOutcome.articles.through.objects, "precedentoutcome__precedent_id", "article_id", start_pks, end_pks)
    return [(p, a, {}) for p, a in qs.values_list("precedentoutcome__precedent_id", "article_id").distinct()]


def _cites_count():
    return PrecedentOutcome.articles.through.objects.values_list("precedentoutcome__precedent_id", "article_id").distinct().count()


def _convicted(start_pks, end_pks):
    qs = _filter(PrecedentOutcome.charges.through.objects, "precedentoutcome__precedent_id", "charge_id", start_pks, end_pks)
    return [(p, c, {}) for p, c in qs.values_list("precedentoutcome__precedent_id", "charge_id").distinct()]


def _convicted_count():
    return PrecedentOutcome.charges.through.objects.values_list("precedentoutcome__precedent_id", "charge_id").distinct().count()


def _defines(start_pks, end_pks):
    qs = _filter(Charge.articles.through.objects, "article_id", "charge_id", start_pks, end_pks)
    return [(a, c, {}) for a, c in qs.values_list("article_id", "charge_id")]


def _has_feature(start_pks, end_pks):
    qs = _filter(CaseFeatures.features.through.objects, "casefeatures__precedent_id", "feature_id", start_pks, end_pks)
    return [(p, f, {}) for p, f in qs.values_list("casefeatures__precedent_id", "feature_id")]


def _similar(start_pks, end_pks):
    qs = _filter(Similarity.objects, "source_id", "target_id", start_pks, end_pks)
    return [(s, t, {"score": round(score, 6), "rank": r}) for s, t, score, r in qs.values_list("source_id", "target_id", "score", "rank")]


def _in_community(start_pks, end_pks):
    qs = _filter(CommunityMembership.objects, "precedent_id", "community_id", start_pks, end_pks)
    return [(p, c, {"assigned": a}) for p, c, a in qs.values_list("precedent_id", "community_id", "assigned")]


def _interprets(start_pks, end_pks):
    qs = _filter(Interpretation.articles.through.objects, "interpretation_id", "article_id", start_pks, end_pks)
    return [(i, a, {}) for i, a in qs.values_list("interpretation_id", "article_id")]


def _refers(start_pks, end_pks):
    qs = _filter(Article.refers_to.through.objects, "from_article_id", "to_article_id", start_pks, end_pks)
    return [(s, t, {}) for s, t in qs.values_list("from_article_id", "to_article_id")]


def _has_check(start_pks, end_pks):
    qs = _filter(ChecklistItem.objects, "article_version__article_id", "pk", start_pks, end_pks)
    return [(a, i, {"version_pk": v}) for a, i, v in qs.values_list("article_version__article_id", "pk", "article_version_id")]


EDGES = [
    EdgeSpec("CITES", "Case", "Article", _cites, _cites_count),
    EdgeSpec("CONVICTED_OF", "Case", "Offence", _convicted, _convicted_count),
    EdgeSpec("DEFINES", "Article", "Offence", _defines, lambda: Charge.articles.through.objects.count()),
    EdgeSpec("HAS_FEATURE", "Case", "Feature", _has_feature, lambda: CaseFeatures.features.through.objects.count()),
    EdgeSpec("SIMILAR_TO", "Case", "Case", _similar, lambda: Similarity.objects.count()),
    EdgeSpec("IN_COMMUNITY", "Case", "Community", _in_community, lambda: CommunityMembership.objects.count()),
    EdgeSpec("INTERPRETS", "Interpretation", "Article", _interprets, lambda: Interpretation.articles.through.objects.count()),
    EdgeSpec("REFERS_TO", "Article", "Article", _refers, lambda: Article.refers_to.through.objects.count()),
    EdgeSpec("HAS_CHECK", "Article", "ChecklistItem", _has_check, lambda: ChecklistItem.objects.count()),
]


def _create_labels() -> None:
    """Every label with its indexes (idempotent; also run by migration 0003)."""
    for spec in VERTICES:
        age.label_create(spec.label, indexed=spec.indexed)
    for spec in EDGES:
        age.label_create(spec.label, edge=True)


@transaction.atomic
def graph_project_all(progress: Callable[[str], None] | None = None) -> dict[str, int]:
    """Rebuild the whole AGE projection from the relational tables, in one transaction."""
    age.graph_clear()
    _create_labels()
    for spec in VERTICES:
        age.vertices_insert(spec.label, spec.rows(None))
        if progress:
            progress(f"vertices {spec.label}")
    age.graph_analyze()  # the edge inserts join on the new vertices
    for spec in EDGES:
        age.edges_insert(spec.label, spec.start, spec.end, list(spec.pairs(None, None)))
        if progress:
            progress(f"edges {spec.label}")
    age.graph_analyze()
    generation_bump()  # what the pages derived from the graph is derived again (apps/core/caching.py)
    return age.label_counts()


def expected_counts() -> dict[str, int]:
    return {spec.label: spec.count() for spec in [*VERTICES, *EDGES]}


def graph_consistency() -> dict[str, tuple[int, int]]:
    """Labels whose AGE count differs from the relational count: {label: (relational, graph)}."""
    actual = age.label_counts() if age.graph_exists() else {}
    return {label: (n, actual.get(label, 0)) for label, n in expected_counts().items() if actual.get(label, 0) != n}


def _spec(label: str) -> VertexSpec:
    return next(s for s in VERTICES if s.label == label)


def _delete_vertices(label: str, pks: set[int]) -> None:
    age.cypher(f"MATCH (n:{age.check_label(label)}) WHERE n.pk IN $pks DETACH DELETE n RETURN count(*)",
               {"pks": sorted(pks)}, columns=["deleted"])


def _existing_pks(label: str, pks: set[int]) -> set[int]:
    rows = age.cypher(f"MATCH (n:{age.check_label(label)}) WHERE n.pk IN $pks RETURN n.pk", {"pks": sorted(pks)}, columns=["pk"])
    return {r[0] for r in rows}


def _ensure_vertices(label: str, pks: set[int]) -> None:
    missing = pks - _existing_pks(label, pks) if pks else set()
    if missing:
        age.vertices_insert(label, _spec(label).rows(missing))


def graph_sync(label: str, pks: Iterable[int]) -> None:
    """Replace the vertices ``label``/``pks`` and every edge touching them with what the tables say now.

    Deleted rows disappear from the graph; new rows appear with their edges.
    Runs in the caller's transaction (with the relational change).
    """
    pks = set(pks)
    if not pks or not age.graph_exists():
        return
    generation_bump()  # what the pages derived from the graph is derived again (apps/core/caching.py)
    _create_labels()
    _delete_vertices(label, pks)
    if label == "Article":
        # An article's checklist items hang off it; they are replaced with it.
        items = set(ChecklistItem.objects.filter(article_version__article_id__in=pks).values_list("pk", flat=True))
        stale = {r[0] for r in age.cypher("MATCH (a:Article)-[:HAS_CHECK]->(i:ChecklistItem) WHERE a.pk IN $pks RETURN i.pk",
                                          {"pks": sorted(pks)}, columns=["pk"])}
        _delete_vertices("ChecklistItem", items | stale)
        age.vertices_insert("ChecklistItem", _spec("ChecklistItem").rows(items))
    rows = _spec(label).rows(pks)
    age.vertices_insert(label, rows)
    present = {r["pk"] for r in rows}
    for spec in EDGES:
        starts = present if spec.start == label else None
        ends = present if spec.end == label else None
        if starts is None and ends is None:
            continue
        pairs = list(spec.pairs(starts or set(), ends or set()))
        _ensure_vertices(spec.start, {s for s, _, _ in pairs} - (present if spec.start == label else set()))
        _ensure_vertices(spec.end, {t for _, t, _ in pairs} - (present if spec.end == label else set()))
        age.edges_insert(spec.label, spec.start, spec.end, pairs)
