"""P7: the hot-path Cypher queries against their SQL-join equivalents, and HNSW recall.

1. Every Cypher query the agents run on the hot path (through apps.graph.store.AgeGraphStore)
   against the SQL join over the relational tables it mirrors, interleaved call by call
   with the same arguments (200 random arguments each; tiny: 10). Goal: ratio ≤ 10×.
2. Recall@10 of the pgvector HNSW index of the precedents against an exact scan at the
   ef_search the search service sets (apps/corpus/search_service.py: max(40, 2k)), on the
   same query vectors (eval facts embedded with the active model); the time of the exact
   scan is the baseline of the HNSW latency. Goal: recall ≥ 0.98, else use the exact scan.

The graph build itself is timed by P1.
"""

from __future__ import annotations

import random
import time

from bench.common import Context, goal, row, spread

K = 10


def _sql(query: str, params: list) -> list:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchall()


def hot_path_queries(store, rng: random.Random, n: int) -> list[tuple[str, object, object, list]]:
    """(name, Cypher call, SQL call, argument list) for each query the agents run."""
    from apps.corpus.models import Article, Charge, Precedent
    from apps.graph.models import Community

    cases = [(pk,) for pk in rng.choices(list(Precedent.objects.values_list("pk", flat=True)), k=n)]
    charges = [(c,) for c in rng.choices(list(Charge.objects.filter(outcomes__isnull=False).distinct()
                                              .values_list("name", flat=True)), k=n)]
    articles = [(pk,) for pk in rng.choices(list(Article.objects.filter(versions__checklist__isnull=False).distinct()
                                                 .values_list("pk", flat=True)), k=n)]
    communities = [(pk,) for pk in rng.choices(list(Community.objects.values_list("pk", flat=True)), k=n)]
    batches = [(sorted(rng.sample([pk for (pk,) in cases], 5)),) for _ in range(n)]
    q = store._q
    return [
        ("articles_of_case", lambda pk: q("MATCH (c:Case)-[:CITES]->(a:Article) WHERE c.pk = $pk RETURN a", {"pk": pk}, ("a",)),
         lambda pk: _sql("SELECT DISTINCT a.* FROM corpus_article a JOIN corpus_precedentoutcome_articles l ON l.article_id = a.id "
                         "JOIN corpus_precedentoutcome o ON o.id = l.precedentoutcome_id WHERE o.precedent_id = %s", [pk]), cases),
        ("cases_of_offence", lambda name: q("MATCH (c:Case)-[:CONVICTED_OF]->(o:Offence) WHERE o.name = $name "
                                            "RETURN c.pk ORDER BY c.pk LIMIT $limit", {"name": name, "limit": 200}, ("pk",)),
         lambda name: _sql("SELECT DISTINCT o.precedent_id FROM corpus_precedentoutcome o JOIN corpus_precedentoutcome_charges l "
                           "ON l.precedentoutcome_id = o.id JOIN corpus_charge c ON c.id = l.charge_id WHERE c.name = %s "
                           "ORDER BY o.precedent_id LIMIT 200", [name]), charges),
        ("charges_of_cases", lambda pks: q("MATCH (c:Case)-[:CONVICTED_OF]->(o:Offence) WHERE c.pk IN $pks "
                                           "RETURN c.pk, collect(o.name)", {"pks": pks}, ("pk", "names")),
         lambda pks: _sql("SELECT o.precedent_id, array_agg(DISTINCT c.name) FROM corpus_precedentoutcome o "
                          "JOIN corpus_precedentoutcome_charges l ON l.precedentoutcome_id = o.id "
                          "JOIN corpus_charge c ON c.id = l.charge_id WHERE o.precedent_id = ANY(%s) GROUP BY o.precedent_id",
                          [pks]), batches),
        ("neighbours", lambda pk: q("MATCH (c:Case)-[s:SIMILAR_TO]->(d:Case) WHERE c.pk = $pk RETURN d.pk, s.score",
                                    {"pk": pk}, ("pk", "score")),
         lambda pk: _sql("SELECT target_id, score FROM graph_similarity WHERE source_id = %s", [pk]), cases),
        ("checklist", lambda pk: q("MATCH (a:Article)-[:HAS_CHECK]->(i:ChecklistItem) WHERE a.pk = $pk AND i.variant = 'main' "
                                   "RETURN i", {"pk": pk}, ("i",)),
         lambda pk: _sql("SELECT i.* FROM corpus_checklistitem i JOIN corpus_articleversion v ON v.id = i.article_version_id "
                         "WHERE v.article_id = %s AND i.variant = 'main'", [pk]), articles),
        ("community_members", lambda pk: q("MATCH (c:Case)-[:IN_COMMUNITY]->(m:Community) WHERE m.pk = $pk RETURN c.pk ORDER BY c.pk",
                                           {"pk": pk}, ("pk",)),
         lambda pk: _sql("SELECT precedent_id FROM graph_communitymembership WHERE community_id = %s ORDER BY precedent_id", [pk]),
         communities),
        ("community_of", lambda pk: q("MATCH (c:Case)-[:IN_COMMUNITY]->(m:Community) WHERE c.pk = $pk RETURN m.pk ORDER BY m.pk "
                                      "LIMIT 1", {"pk": pk}, ("pk",)),
         lambda pk: _sql("SELECT community_id FROM graph_communitymembership WHERE precedent_id = %s ORDER BY community_id "
                         "LIMIT 1", [pk]), cases),
        ("articles_defining", lambda name: q("MATCH (a:Article)-[:DEFINES]->(o:Offence) WHERE o.name = $name RETURN a",
                                             {"name": name}, ("a",)),
         lambda name: _sql("SELECT a.* FROM corpus_article a JOIN corpus_charge_articles l ON l.article_id = a.id "
                           "JOIN corpus_charge c ON c.id = l.charge_id WHERE c.name = %s", [name]), charges),
    ]


def _recall_at_ef(index, vectors, exact_sets, ef: int) -> dict:
    """Recall@K and p50 latency of the same HNSW search at another ef_search (what raising it would buy)."""
    from django.db import connection, transaction

    dim = int(index.dim)
    sql = (f"SELECT object_id FROM corpus_densevector WHERE index_id = {int(index.pk)} "
           f"ORDER BY vector::vector({dim}) <=> %s::vector({dim}) LIMIT %s")
    recalls, times = [], []
    for vector, exact in zip(vectors, exact_sets):
        literal = "[" + ",".join(f"{x:.7g}" for x in vector) + "]"
        t = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.ef_search = %s", [ef])
            cursor.execute(sql, [literal, K])
            found = {int(r[0]) for r in cursor.fetchall()}
        times.append((time.perf_counter() - t) * 1000)
        recalls.append(len(found & exact) / max(len(exact), 1))
    return {"recall": sum(recalls) / len(recalls), "p50_ms": spread(times)["p50"]}


def run(ctx: Context) -> list[dict]:
    from apps.corpus.models import Precedent, SearchIndex
    from apps.corpus.search_service import dense_search_vector, query_vector
    from apps.graph.store import AgeGraphStore

    rows = []
    store = AgeGraphStore()
    n = ctx.size(200, 10)
    for name, cypher_fn, sql_fn, args in hot_path_queries(store, random.Random(7), n):
        cypher_fn(*args[0]), sql_fn(*args[0])  # warm: prepared statements, caches
        t_c, t_s = [], []
        for a in args:
            t = time.perf_counter()
            cypher_fn(*a)
            t_c.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            sql_fn(*a)
            t_s.append((time.perf_counter() - t) * 1000)
        c, s = spread(t_c), spread(t_s)
        rows.append(row("P7", f"Cypher {name} (p50)", c["p50"], "ms", baseline="the equivalent SQL join, same arguments, same run",
                        baseline_value=s["p50"], stats=c, baseline_stats=s,
                        goals=[goal("≤ 10× SQL", None if ctx.tiny else c["p50"] <= 10 * s["p50"])],
                        details={"calls": len(args)}))

    facts = [r["fact"] for r in ctx.eval_cases(ctx.size(200, 10))]
    recalls, t_hnsw, t_exact, vectors, exact_sets = [], [], [], [], []
    index = None
    for fact in facts:
        index, vector = query_vector(target=SearchIndex.Target.PRECEDENTS, query=fact)
        t0 = time.perf_counter()
        approx = {pk for pk, _ in dense_search_vector(index, vector, k=K)}
        t1 = time.perf_counter()
        exact = {pk for pk, _ in dense_search_vector(index, vector, k=K, exact=True)}
        t2 = time.perf_counter()
        recalls.append(len(approx & exact) / max(len(exact), 1))
        vectors.append(vector)
        exact_sets.append(exact)
        t_hnsw.append((t1 - t0) * 1000)
        t_exact.append((t2 - t1) * 1000)
    mean_recall = sum(recalls) / len(recalls)
    sweep = {ef: _recall_at_ef(index, vectors, exact_sets, ef) for ef in (40, 100, 200, 400)} if index else {}
    h, e = spread(t_hnsw), spread(t_exact)
    rows.append(row(
        "P7", f"HNSW recall@{K} vs exact scan (mean over {len(facts)} queries)", mean_recall, "",
        baseline="exact scan (sequential, same query vectors), recall 1 by definition", baseline_value=1.0,
        goals=[goal("recall@10 ≥ 0.98", None if ctx.tiny else mean_recall >= 0.98)],
        details={"ef_search": max(40, 2 * K), "min_recall": min(recalls), "documents": Precedent.objects.count(),
                 "recall_and_p50_ms_by_ef_search": sweep, "model_id": index.model_id if index else "", "dim": index.dim if index else None},
    ))
    rows.append(row(
        "P7", f"HNSW top-{K} search latency (p50)", h["p50"], "ms", baseline="exact scan of the same vectors, same run",
        baseline_value=e["p50"], stats=h, baseline_stats=e, goals=[],
    ))
    return rows
