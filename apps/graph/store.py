"""GraphStore over Apache AGE: the agents' view of the hierarchical legal graph.

Traversals are Cypher (through apps.graph.age); long texts (article versions,
interpretation paragraphs) and outcome terms are read from the relational
tables the graph mirrors, by primary key.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import F

from apps.corpus.models import ArticleVersion, Interpretation
from apps.graph import age
from apps.graph.models import Community
from worker.agents.graph_types import (
    ArticleNode,
    ArticleText,
    CaseNode,
    ChecklistEntry,
    CommunityNode,
    InterpretationNode,
    Term,
)


def _article_node(props: dict, charges=()) -> ArticleNode:
    return ArticleNode(pk=props["pk"], law=props["law"], number=props["number"], sub=props["sub"],
                       label=props["label"], charges=tuple(sorted(charges)))


# The cases of _fetch_cases: each with its charges, the articles it cites and the first outcome's term (when known).
_CASES_SQL = """
SELECT p.id, p.ext_id, p.court_level, p.fine,
       ARRAY(SELECT DISTINCT c.name FROM corpus_charge c
             JOIN corpus_precedentoutcome_charges oc ON oc.charge_id = c.id
             JOIN corpus_precedentoutcome o ON o.id = oc.precedentoutcome_id
             WHERE o.precedent_id = p.id ORDER BY 1),
       ARRAY(SELECT DISTINCT oa.article_id FROM corpus_precedentoutcome_articles oa
             JOIN corpus_precedentoutcome o ON o.id = oa.precedentoutcome_id
             WHERE o.precedent_id = p.id ORDER BY 1),
       t.id IS NOT NULL, t.term_months, t.life, t.death, t.term_kind, t.suspended
FROM corpus_precedent p
LEFT JOIN corpus_precedentoutcome t ON t.precedent_id = p.id AND t.position = 0 AND t.term_known
WHERE p.id = ANY(%s)
ORDER BY p.id
"""


class AgeGraphStore:
    """Implements worker.agents.ports.GraphStore. Lists are ordered as documented there.

    One store is one snapshot: what it has read it keeps (cases, articles, checklists, texts), so a
    judgment reads each node once however often its stages ask. Make a new store per judgment (the
    services do); a long-lived one would not see later imports.
    """

    def __init__(self, graph: str = age.GRAPH_NAME):
        self.graph = graph
        self._case_cache: dict[int, CaseNode | None] = {}
        self._memo_cache: dict[tuple, object] = {}
        self._memo_index: dict[str, set] = {}  # kind → the first key parts memoised for it (prefetches skip them)

    def _memo(self, key: tuple, fetch):
        if key not in self._memo_cache:
            self._memo_put(key, fetch())
        value = self._memo_cache[key]
        return list(value) if isinstance(value, list) else value  # callers may sort or extend their copy

    def _memo_put(self, key: tuple, value) -> None:
        self._memo_cache[key] = value
        self._memo_index.setdefault(key[0], set()).add(key[1])

    def _memo_keys(self, kind: str) -> set:
        return self._memo_index.get(kind, set())

    def _q(self, query: str, params: dict | None = None, columns=("result",)) -> list[tuple]:
        return age.cypher(query, params or {}, columns=columns, graph=self.graph)

    # -- fact graph -----------------------------------------------------------
    def cases(self, case_pks) -> list[CaseNode]:
        """The cases that exist among ``case_pks``, by pk, read in one batch for those not read yet."""
        wanted = sorted({int(pk) for pk in case_pks})
        missing = [pk for pk in wanted if pk not in self._case_cache]
        if missing:
            found = {c.pk: c for c in self._fetch_cases(missing)}
            self._case_cache.update({pk: found.get(pk) for pk in missing})
        return [c for pk in wanted if (c := self._case_cache[pk]) is not None]

    def _fetch_cases(self, pks: list[int]) -> list[CaseNode]:
        if not pks:
            return []
        # One SQL query over the tables the Case vertices and their CONVICTED_OF / CITES edges mirror
        # (apps.graph.services.projection): the three Cypher "c.pk IN $pks" reads it replaces took most of
        # R_chg's time (charges_of_cases ran at 7.8x its SQL join in P7). Written out rather than built by the
        # ORM: compiling its subqueries cost more than running them (a what-if reads the cases once).
        with connection.cursor() as cursor:
            cursor.execute(_CASES_SQL, [list(pks)])
            rows = cursor.fetchall()
        nodes = []
        for pk, ext_id, court, fine, names, arts, has_term, months, life, death, kind, suspended in rows:
            sentence = {"term_kind": kind, "suspended": suspended, "fine": fine} if has_term else {}
            nodes.append(CaseNode(pk=pk, ext_id=ext_id, charges=tuple(sorted(names or [])),
                                  article_pks=tuple(sorted(arts or [])), court_level=court or "",
                                  term=Term(months=months or 0, life=life, death=death) if has_term else None, **sentence))
        return nodes

    def case(self, case_pk: int) -> CaseNode | None:
        if case_pk not in self._case_cache:
            self.cases([case_pk])
        return self._case_cache.get(int(case_pk))

    def cases_of_offence(self, charge: str, limit: int = 50) -> list[CaseNode]:
        pks = self._memo(("cases_of_offence", (charge, limit)), lambda: [r[0] for r in self._q(
            "MATCH (c:Case)-[:CONVICTED_OF]->(o:Offence) WHERE o.name = $name RETURN c.pk ORDER BY c.pk LIMIT $limit",
            {"name": charge, "limit": limit}, ("pk",))])
        return self.cases(pks)

    def prefetch_offences(self, charges, *, with_cases=(), cases_limit: int = 50) -> None:
        """articles_defining() of all ``charges``, and cases_of_offence(charge, cases_limit) of those in
        ``with_cases`` with their case nodes, in four round trips rather than one to three per charge."""
        defining = sorted(set(charges) - self._memo_keys("articles_defining"))
        if defining:
            rows = self._q("MATCH (a:Article)-[:DEFINES]->(o:Offence) WHERE o.name IN $names RETURN o.name, a",
                           {"names": defining}, ("name", "a"))
            charges_of = self._charges_of_articles(sorted({r[1]["properties"]["pk"] for r in rows}))
            found: dict[str, list[ArticleNode]] = {name: [] for name in defining}
            for name, a in rows:
                found[name].append(_article_node(a["properties"], charges_of.get(a["properties"]["pk"], [])))
            for name, nodes in found.items():
                self._memo_put(("articles_defining", name), sorted(nodes, key=lambda a: (a.law, a.number, a.sub)))
        wanted = sorted({c for c in with_cases} - {name for name, limit in self._memo_keys("cases_of_offence")
                                                    if limit == cases_limit})
        if wanted:
            rows = self._q("MATCH (c:Case)-[:CONVICTED_OF]->(o:Offence) WHERE o.name IN $names RETURN o.name, collect(c.pk)",
                           {"names": wanted}, ("name", "pks"))
            members = dict(rows)
            for name in wanted:
                self._memo_put(("cases_of_offence", (name, cases_limit)), sorted(members.get(name) or [])[:cases_limit])
            self.cases(pk for name in wanted for pk in self._memo_cache[("cases_of_offence", (name, cases_limit))])

    def _articles(self, query: str, params: dict) -> list[ArticleNode]:
        rows = self._q(query, params, ("a",))
        pks = [r[0]["properties"]["pk"] for r in rows]
        charges = self._charges_of_articles(pks)
        nodes = [_article_node(r[0]["properties"], charges.get(r[0]["properties"]["pk"], [])) for r in rows]
        return sorted(nodes, key=lambda a: (a.law, a.number, a.sub))

    def _charges_of_articles(self, pks: list[int]) -> dict[int, list[str]]:
        return dict(self._q("MATCH (a:Article)-[:DEFINES]->(o:Offence) WHERE a.pk IN $pks RETURN a.pk, collect(o.name)",
                            {"pks": pks}, ("pk", "names"))) if pks else {}

    def prefetch_articles(self, article_pks) -> None:
        """article() and article_texts() of all ``article_pks`` in three round trips, not two per article."""
        pks = sorted({int(pk) for pk in article_pks} - self._memo_keys("article"))
        if not pks:
            return
        rows = self._q("MATCH (a:Article) WHERE a.pk IN $pks RETURN a", {"pks": pks}, ("a",))
        charges = self._charges_of_articles([r[0]["properties"]["pk"] for r in rows])
        found = {r[0]["properties"]["pk"]: _article_node(r[0]["properties"], charges.get(r[0]["properties"]["pk"], []))
                 for r in rows}
        texts: dict[int, list[ArticleText]] = {pk: [] for pk in pks}
        for v in ArticleVersion.objects.filter(article_id__in=pks).order_by(F("valid_from").asc(nulls_first=True), "pk"):
            texts[v.article_id].append(ArticleText(version_pk=v.pk, article_pk=v.article_id, text=v.text,
                                                   valid_from=v.valid_from, valid_to=v.valid_to))
        for pk in pks:
            self._memo_put(("article", pk), [found[pk]] if pk in found else [])
            if ("article_texts", pk) not in self._memo_cache:
                self._memo_put(("article_texts", pk), texts[pk])

    def prefetch_articles_of_cases(self, case_pks) -> None:
        """articles_of_case() of all ``case_pks`` in two round trips, not two per case."""
        pks = sorted({int(pk) for pk in case_pks} - self._memo_keys("articles_of_case"))
        if not pks:
            return
        rows = self._q("MATCH (c:Case)-[:CITES]->(a:Article) WHERE c.pk IN $pks RETURN c.pk, a", {"pks": pks}, ("pk", "a"))
        charges = self._charges_of_articles(sorted({r[1]["properties"]["pk"] for r in rows}))
        cited: dict[int, list[ArticleNode]] = {pk: [] for pk in pks}
        for case_pk, a in rows:
            cited[case_pk].append(_article_node(a["properties"], charges.get(a["properties"]["pk"], [])))
        for pk in pks:
            self._memo_put(("articles_of_case", pk), sorted(cited[pk], key=lambda a: (a.law, a.number, a.sub)))

    def articles_of_case(self, case_pk: int) -> list[ArticleNode]:
        return self._memo(("articles_of_case", case_pk), lambda: self._articles(
            "MATCH (c:Case)-[:CITES]->(a:Article) WHERE c.pk = $pk RETURN a", {"pk": case_pk}))

    def articles_defining(self, charge: str) -> list[ArticleNode]:
        return self._memo(("articles_defining", charge), lambda: self._articles(
            "MATCH (a:Article)-[:DEFINES]->(o:Offence) WHERE o.name = $name RETURN a", {"name": charge}))

    def offences(self) -> list[str]:
        return [r[0] for r in self._q("MATCH (o:Offence) RETURN o.name ORDER BY o.name", columns=("name",))]

    # -- ontology graph -------------------------------------------------------
    def neighbours(self, case_pk: int) -> list[tuple[int, float]]:
        rows = self._q("MATCH (c:Case)-[s:SIMILAR_TO]->(d:Case) WHERE c.pk = $pk RETURN d.pk, s.score",
                       {"pk": case_pk}, ("pk", "score"))
        return sorted(((r[0], float(r[1])) for r in rows), key=lambda x: (-x[1], x[0]))

    def communities(self) -> list[CommunityNode]:
        rows = self._q("MATCH (m:Community) RETURN m.pk", columns=("pk",))
        pks = [r[0] for r in rows]
        return [CommunityNode(pk=c.pk, level=c.level, size=c.size, summary=c.summary,
                              top_charges=tuple(name for name, _ in c.top_charges))
                for c in Community.objects.filter(pk__in=pks).order_by("level", "number")]

    def community_members(self, community_pk: int) -> list[int]:
        rows = self._q("MATCH (c:Case)-[:IN_COMMUNITY]->(m:Community) WHERE m.pk = $pk RETURN c.pk ORDER BY c.pk",
                       {"pk": community_pk}, ("pk",))
        return [r[0] for r in rows]

    def community_of(self, case_pk: int) -> int | None:
        rows = self._q("MATCH (c:Case)-[:IN_COMMUNITY]->(m:Community) WHERE c.pk = $pk RETURN m.pk ORDER BY m.pk LIMIT 1",
                       {"pk": case_pk}, ("pk",))
        return rows[0][0] if rows else None

    # -- rule graph -----------------------------------------------------------
    def article(self, article_pk: int) -> ArticleNode | None:
        found = self._memo(("article", article_pk),
                           lambda: self._articles("MATCH (a:Article) WHERE a.pk = $pk RETURN a", {"pk": article_pk}))
        return found[0] if found else None

    def article_texts(self, article_pk: int) -> list[ArticleText]:
        return self._memo(("article_texts", article_pk), lambda: self._article_texts(article_pk))

    def _article_texts(self, article_pk: int) -> list[ArticleText]:
        return [ArticleText(version_pk=v.pk, article_pk=article_pk, text=v.text, valid_from=v.valid_from, valid_to=v.valid_to)
                for v in ArticleVersion.objects.filter(article_id=article_pk).order_by(F("valid_from").asc(nulls_first=True), "pk")]

    def checklist(self, article_pk: int, version_pk: int | None = None) -> list[ChecklistEntry]:
        return self._memo(("checklist", article_pk, version_pk), lambda: self._checklist(article_pk, version_pk))

    def _checklist(self, article_pk: int, version_pk: int | None) -> list[ChecklistEntry]:
        rows = self._q("MATCH (a:Article)-[:HAS_CHECK]->(i:ChecklistItem) WHERE a.pk = $pk AND i.variant = 'main' RETURN i",
                       {"pk": article_pk}, ("i",))
        items = [r[0]["properties"] for r in rows]
        if version_pk is None:
            texts = self.article_texts(article_pk)
            current = next((t for t in texts if t.valid_to is None), texts[-1] if texts else None)
            version_pk = current.version_pk if current else None
        return sorted((ChecklistEntry(pk=i["pk"], version_pk=i["version_pk"], order=i["order"], question=i["question"])
                       for i in items if i["version_pk"] == version_pk), key=lambda e: e.order)

    def interpretations(self, article_pk: int) -> list[InterpretationNode]:
        return self._memo(("interpretations", article_pk), lambda: self._interpretations(article_pk))

    def _interpretations(self, article_pk: int) -> list[InterpretationNode]:
        rows = self._q("MATCH (i:Interpretation)-[:INTERPRETS]->(a:Article) WHERE a.pk = $pk RETURN i.pk", {"pk": article_pk}, ("pk",))
        return [InterpretationNode(pk=i.pk, source=i.source, para=i.para, text=i.text)
                for i in Interpretation.objects.filter(pk__in=[r[0] for r in rows]).order_by("pk")]

    def interpreted_articles(self, interpretation_pk: int) -> list[ArticleNode]:
        return self._articles("MATCH (i:Interpretation)-[:INTERPRETS]->(a:Article) WHERE i.pk = $pk RETURN a",
                              {"pk": interpretation_pk})

    def opening_with(self, opening: str) -> list[tuple[ArticleNode, str]]:
        return self._memo(("opening_with", opening), lambda: self._opening_with(opening))

    def _opening_with(self, opening: str) -> list[tuple[ArticleNode, str]]:
        versions = list(ArticleVersion.objects.filter(valid_to__isnull=True, repealed=False, text__regex=opening))
        self.prefetch_articles(v.article_id for v in versions)
        found = [(self.article(v.article_id), v.text) for v in versions]
        return sorted(((node, text) for node, text in found if node is not None),
                      key=lambda pair: (pair[0].law, pair[0].number, pair[0].sub))

    def references(self, article_pk: int) -> list[ArticleNode]:
        return self._articles("MATCH (a:Article)-[:REFERS_TO]->(b:Article) WHERE a.pk = $pk RETURN b", {"pk": article_pk})

    def referring(self, article_pks) -> dict[int, list[ArticleNode]]:
        """Per article pk, the articles that REFER_TO it, in statute order: one round trip for all of them."""
        pks = sorted({int(pk) for pk in article_pks})
        if not pks:
            return {}
        rows = self._q("MATCH (a:Article)-[:REFERS_TO]->(b:Article) WHERE b.pk IN $pks RETURN b.pk, a", {"pks": pks},
                       ("pk", "a"))
        charges = self._charges_of_articles(sorted({r[1]["properties"]["pk"] for r in rows}))
        found: dict[int, list[ArticleNode]] = {}
        for pk, vertex in rows:
            props = vertex["properties"]
            found.setdefault(int(pk), []).append(_article_node(props, charges.get(props["pk"], [])))
        return {pk: sorted(nodes, key=lambda a: (a.law, a.number, a.sub)) for pk, nodes in found.items()}
