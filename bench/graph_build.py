"""Graph benchmarks on the full corpus (2 cores).

1. A full `graph_build` (features, embedding, kNN, Leiden, summaries, AGE
   projection; no LLM, no neural inference): its wall time, and the ratio of
   that wall time to the sum of its stages measured in the same run.
2. Hot-path Cypher queries (what the agents ask) against their SQL-join
   equivalents over the same relational tables, run side by side: ratio
   Cypher / SQL per query.

Run:  make bench-graph   (after `make bench-import`; uses lextrace_bench)
"""

import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from apps.corpus.models import Article, Charge, Precedent  # noqa: E402
from apps.graph.models import Community  # noqa: E402
from apps.graph.services.building import graph_build  # noqa: E402
from apps.graph.services.projection import graph_consistency  # noqa: E402
from apps.graph.store import AgeGraphStore  # noqa: E402

REPEAT = 200


def sql(query: str, params: list) -> list:
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchall()


def bench(fn, args_list) -> float:
    fn(*args_list[0])  # warm: prepares statements, fills caches
    times = []
    for args in args_list:
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    if connection.settings_dict["NAME"] != "lextrace_bench":
        sys.exit("run through `make bench-graph` (it uses the scratch database lextrace_bench)")
    if Precedent.objects.count() < 10000:
        sys.exit("import the full corpus first: make bench-import")

    t = time.perf_counter()
    build = graph_build()
    whole = time.perf_counter() - t
    parts = sum(build.timings.values())
    print(f"full graph build on {Precedent.objects.count()} cases: {whole:.1f} s (limit 300 s)")
    print(f"  stages: {build.timings}")
    print(f"  sum of stages {parts:.1f} s; ratio whole / sum = {whole / parts:.3f} (limit 1.3)")
    print(f"  consistency drift: {graph_consistency() or 'none'}")
    print(f"  communities: {build.stats['communities']['communities']}, sizes {build.stats['communities']['sizes']}, "
          f"top-charge share {build.stats['communities']['top_charge_share_pct']} %")

    rng = random.Random(7)
    store = AgeGraphStore()
    cases = rng.sample(list(Precedent.objects.values_list("pk", flat=True)), REPEAT)
    charges = [(c,) for c in rng.choices(list(Charge.objects.filter(outcomes__isnull=False).distinct().values_list("name", flat=True)), k=REPEAT)]
    articles = rng.choices(list(Article.objects.filter(versions__checklist__isnull=False).distinct().values_list("pk", flat=True)), k=REPEAT)
    communities = rng.choices(list(Community.objects.values_list("pk", flat=True)), k=REPEAT)

    rows = [
        ("articles_of_case", lambda pk: store._q("MATCH (c:Case)-[:CITES]->(a:Article) WHERE c.pk = $pk RETURN a.pk", {"pk": pk}, ("pk",)),
         lambda pk: sql("SELECT DISTINCT l.article_id FROM corpus_precedentoutcome o JOIN corpus_precedentoutcome_articles l "
                        "ON l.precedentoutcome_id = o.id WHERE o.precedent_id = %s", [pk]), [(pk,) for pk in cases]),
        ("cases_of_offence", lambda name: store._q("MATCH (c:Case)-[:CONVICTED_OF]->(o:Offence) WHERE o.name = $name RETURN c.pk ORDER BY c.pk LIMIT 50",
                                                   {"name": name}, ("pk",)),
         lambda name: sql("SELECT DISTINCT o.precedent_id FROM corpus_precedentoutcome o JOIN corpus_precedentoutcome_charges l "
                          "ON l.precedentoutcome_id = o.id JOIN corpus_charge c ON c.id = l.charge_id WHERE c.name = %s "
                          "ORDER BY o.precedent_id LIMIT 50", [name]), charges),
        ("neighbours", lambda pk: store._q("MATCH (c:Case)-[s:SIMILAR_TO]->(d:Case) WHERE c.pk = $pk RETURN d.pk, s.score", {"pk": pk}, ("pk", "score")),
         lambda pk: sql("SELECT target_id, score FROM graph_similarity WHERE source_id = %s", [pk]), [(pk,) for pk in cases]),
        ("checklist", lambda pk: store._q("MATCH (a:Article)-[:HAS_CHECK]->(i:ChecklistItem) WHERE a.pk = $pk RETURN i", {"pk": pk}, ("i",)),
         lambda pk: sql("SELECT i.* FROM corpus_checklistitem i JOIN corpus_articleversion v ON v.id = i.article_version_id "
                        "WHERE v.article_id = %s", [pk]), [(pk,) for pk in articles]),
        ("community_members", lambda pk: store._q("MATCH (c:Case)-[:IN_COMMUNITY]->(m:Community) WHERE m.pk = $pk RETURN c.pk", {"pk": pk}, ("pk",)),
         lambda pk: sql("SELECT precedent_id FROM graph_communitymembership WHERE community_id = %s", [pk]), [(pk,) for pk in communities]),
        ("articles_defining", lambda name: store._q("MATCH (a:Article)-[:DEFINES]->(o:Offence) WHERE o.name = $name RETURN a.pk", {"name": name}, ("pk",)),
         lambda name: sql("SELECT l.article_id FROM corpus_charge_articles l JOIN corpus_charge c ON c.id = l.charge_id WHERE c.name = %s", [name]),
         charges),
    ]
    print(f"\nhot-path queries, median of {REPEAT} calls each (Cypher through apps.graph.age vs SQL join):")
    print(f"  {'query':<20} {'cypher ms':>10} {'sql ms':>8} {'ratio':>7}  (limit 10x)")
    for name, cypher_fn, sql_fn, args in rows:
        c = bench(cypher_fn, args) * 1000
        s = bench(sql_fn, args) * 1000
        print(f"  {name:<20} {c:10.3f} {s:8.3f} {c / s:7.2f}")


if __name__ == "__main__":
    main()
