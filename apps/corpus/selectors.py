from django.utils.translation import gettext_lazy as _, pgettext_lazy

from apps.corpus.models import Article, ArticleVersion, Charge, ChecklistItem, Interpretation, Precedent
from apps.corpus.reasons import translate_follow_up, translate_reason


def corpus_counts() -> dict[str, int]:
    return {
        "article_versions": ArticleVersion.objects.count(),
        "articles_with_checklist": Article.objects.filter(versions__checklist__isnull=False).distinct().count(),
        "checklist_items": ChecklistItem.objects.count(),
        "interpretations": Interpretation.objects.count(),
        "charges": Charge.objects.count(),
        "precedents": Precedent.objects.count(),
    }


def article_version_in_force(*, law_title: str, number: int, sub: int = 0, day) -> "ArticleVersion | None":
    """The version of an article in force on ``day`` (None if none was)."""
    from django.db.models import Q

    return (
        ArticleVersion.objects.filter(article__law__title=law_title, article__number=number, article__sub=sub)
        .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=day), Q(valid_to__isnull=True) | Q(valid_to__gte=day))
        .select_related("article")
        .first()
    )


def search_index_freshness() -> list[dict]:
    """Per target and method: documents in the active index against documents in the corpus."""
    from apps.corpus.models import SearchIndex

    corpus = {SearchIndex.Target.ARTICLES: ArticleVersion.objects.count(), SearchIndex.Target.PRECEDENTS: Precedent.objects.count()}
    active = {(i.target, i.method): i for i in SearchIndex.objects.filter(active=True, target__in=corpus)}
    rows = []
    for target, total in corpus.items():
        for method in (SearchIndex.Method.BM25, SearchIndex.Method.DENSE):
            index = active.get((target, method))
            rows.append({"target": target, "method": method, "built": index is not None, "corpus": total,
                         "documents": index.documents if index else 0,
                         "behind": max(0, total - index.documents) if index else total,
                         "ahead": max(0, index.documents - total) if index else 0,
                         "finished_at": index.finished_at if index else None})
    return rows


def graph_freshness() -> dict:
    """Whether every precedent has its ontology features (the incremental follow-up gives new ones theirs)."""
    from apps.graph.models import CaseFeatures, GraphBuild

    build = GraphBuild.objects.filter(status=GraphBuild.Status.DONE).first()
    total = Precedent.objects.count()
    with_features = CaseFeatures.objects.count() if build else 0
    return {"built": build is not None, "finished_at": build.finished_at if build else None, "corpus": total,
            "documents": with_features, "behind": max(0, total - with_features) if build else total}


def search_indexes_current() -> bool:
    """Every search index (BM25 and dense, over articles and over precedents) is active and holds the corpus."""
    return all(r["built"] and not (r["behind"] or r["ahead"]) for r in search_index_freshness())


def graph_current() -> bool:
    """A graph has been built and every precedent has its ontology features."""
    graph = graph_freshness()
    return graph["built"] and not graph["behind"]


def corpus_freshness() -> dict:
    """Search indexes, graph and statistical models against the corpus: nothing may be silently stale."""
    from apps.registry.selectors import models_freshness

    search = search_index_freshness()
    graph = graph_freshness()
    models = models_freshness()
    stale = any(r["built"] and (r["behind"] or r["ahead"]) for r in search) or (graph["built"] and graph["behind"]) \
        or models["state"] == "stale"
    return {"search": search, "graph": graph, "models": models, "stale": stale}


# The page shows this many rows of each list; the JSON download has them all.
REPORT_ROWS = 500


# What each count of an import (its dry run's report, or what it wrote) means, for the page (the JSON keeps the keys).
COUNT_LABELS = {
    "added": _("Added"),
    "amended": _("Amended (a new version)"),
    "unchanged": _("Unchanged (already in the corpus)"),
    "merged": _("Merged as duplicates"),
    "refused": _("Refused"),
    "links": _("Links to articles"),
    "references": _("Cross-references between articles"),
    "checklists": _("Checklists added"),
    "items": _("Checklist items"),
    "replaced": _("Checklists replaced"),
    "outcomes": _("Defendant outcomes"),
    "new_charge_names": _("Charge names new to the corpus"),
    "categorised": _("Charges put in a category"),
    "aliases": _("Charge aliases"),
}


def count_rows(counts: dict | None) -> list[tuple[str, int]]:
    """An import's counts as (label, number), in the order the import gave them."""
    return [(COUNT_LABELS.get(key, key), value) for key, value in (counts or {}).items()]


def import_report_view(batch) -> dict | None:
    """A batch's dry-run report ready for the page: lists cut to REPORT_ROWS, terms in words, the reasons,
    hints and parser notes in the page language (the stored report keeps them in English)."""
    report = batch.report or {}
    if not report.get("counts"):
        return None
    view = {key: report.get(key, []) for key in ("added", "amended", "merged", "refused", "notes")}
    cut = {key: max(0, len(rows) - REPORT_ROWS) for key, rows in view.items()}
    view = {key: rows[:REPORT_ROWS] for key, rows in view.items()}
    view["refused"] = _translated(view["refused"])
    view["notes"] = [{**note, "outcomes": [_outcome_view(outcome) for outcome in note.get("outcomes", [])]}
                     for note in view["notes"]]
    counts = report["counts"]
    rest = any(counts.get(key) for key in ("added", "amended", "merged", "checklists", "categorised", "aliases"))
    return {**view, "counts": counts, "count_rows": count_rows(counts), "rest": rest, "cut": cut,
            "hints": [translate_reason(hint) for hint in report.get("hints", [])],
            "truncated_added": report.get("truncated_added", 0), "needs_confirmation": report.get("needs_confirmation"),
            "publishable": report.get("publishable"),
            "follow_up": follow_up_view((report.get("follow_up") or {}).get("search"))}


# The state of the search-index follow-up after an import (apps/corpus/services/indexing.py), for the page.
FOLLOW_UP_STATES = {
    "followed": _("brought up to date"),
    "not built": _("not built"),
    "not affected": _("not affected by this import"),
    "busy": _("not followed"),
    "failed": _("failed"),
}


def follow_up_view(follow: dict | None) -> dict | None:
    """The stored follow-up ({"state", "detail"?, <target>: {<method>: outcome}}) in the page language:
    the state, each index as (target, method, outcome) and the detail; the stored report stays in English."""
    if not follow:
        return None
    from apps.corpus.models import SearchIndex

    targets, methods = dict(SearchIndex.Target.choices), dict(SearchIndex.Method.choices)
    indexes = [(targets.get(target, target), methods.get(method, method), translate_follow_up(str(outcome)))
               for target, parts in follow.items() if isinstance(parts, dict) for method, outcome in parts.items()]
    state = follow.get("state", "")
    return {"state": FOLLOW_UP_STATES.get(state, state), "indexes": indexes,
            "detail": translate_follow_up(follow.get("detail", ""))}


def _outcome_view(outcome: dict) -> dict:
    """A parsed outcome for the page: its term in words (suspension and fine have their own columns) and its
    notes in the page language."""
    from apps.corpus.services.import_units import term_text

    return {**outcome, "term": term_text({**outcome, "notes": [], "suspended": False, "fine": None}),
            "notes": [translate_reason(text) for text in outcome.get("notes", [])]}


def import_errors_view(batch) -> list[dict]:
    """Why a batch failed (its stored errors), each reason in the page language."""
    return _translated(batch.errors or [])


def _translated(rows: list[dict]) -> list[dict]:
    """Report rows ({"line", "reason"}) with the reason translated; the stored rows are left as they are."""
    return [{**row, "reason": translate_reason(row.get("reason", ""))} for row in rows]


# The stages an import reports in its progress (the names apps/corpus/services/importing.py passes to its
# progress callback), in the page language. The cache and `manage.py import_corpus` keep the English name;
# a name missing here is shown as it is.
IMPORT_STAGES = {
    "reading": pgettext_lazy("corpus import stage", "reading"),
    "checking against the corpus": pgettext_lazy("corpus import stage", "checking against the corpus"),
    "writing": pgettext_lazy("corpus import stage", "writing"),
    "updating the graph": pgettext_lazy("corpus import stage", "updating the graph"),
    "updating the search indexes": pgettext_lazy("corpus import stage", "updating the search indexes"),
}


def import_progress_view(progress: dict | None) -> dict | None:
    """An import's progress for the page: its stage in the page language (the cached progress is unchanged)."""
    if not progress:
        return progress
    stage = progress.get("stage") or ""
    return {**progress, "stage": IMPORT_STAGES.get(stage, stage)}
