from django.http import Http404, JsonResponse
from django.shortcuts import render

from apps.graph.selectors import graph_lookup, graph_neighbourhood, graph_node_detail, graph_statistics

LABELS = {"Case", "Article", "Offence", "Feature", "Community", "Interpretation", "ChecklistItem"}


def statistics(request):
    return render(request, "graph/statistics.html", graph_statistics())


def explorer(request):
    query = request.GET.get("q", "")
    found = graph_lookup(query) if query else None
    context = {"query": query, "found": found, "not_found": bool(query) and found is None}
    if found:
        context["neighbourhood"] = graph_neighbourhood(*found, page=request.GET.get("page"))
        context["detail"] = graph_node_detail(*found)
    return render(request, "graph/explorer.html", context)


def neighbourhood_json(request, label: str, pk: int):
    if label not in LABELS:
        raise Http404
    found = graph_neighbourhood(label, pk, page=request.GET.get("page"))
    found.pop("page")  # the Page object; its number and the page count are in the answer
    return JsonResponse(found)
