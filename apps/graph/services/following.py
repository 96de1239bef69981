"""Keep the graph current after a corpus import, without a full rebuild.

Before the first `build_graph` there is nothing to follow: the build projects
everything. After it, every import updates the ontology and the AGE
projection of exactly what it touched, inside the import's transaction.
"""

from apps.corpus.models import Article, Charge, ImportBatch, Interpretation, Precedent
from apps.graph.models import GraphBuild
from apps.graph.services.projection import graph_sync


def graph_follow_import(*, kind: str, batch: ImportBatch) -> None:
    if not GraphBuild.objects.filter(status=GraphBuild.Status.DONE).exists():
        return
    if kind == "case":
        from apps.graph.services.building import graph_cases_add

        graph_cases_add(list(Precedent.objects.filter(batch=batch).values_list("pk", flat=True)))
    elif kind == "statute":
        graph_sync("Article", Article.objects.filter(versions__batch=batch).values_list("pk", flat=True).distinct())
    elif kind == "checklist":
        graph_sync("Article", Article.objects.filter(versions__checklist__batch=batch).values_list("pk", flat=True).distinct())
    elif kind == "interpretation":
        graph_sync("Interpretation", Interpretation.objects.filter(batch=batch).values_list("pk", flat=True))
    elif kind == "charges":
        graph_sync("Offence", Charge.objects.values_list("pk", flat=True))
