"""A GraphStore held in plain dicts: for pure tests of the agents, and as the
reference semantics the Apache AGE store must reproduce.

Every list it returns has a documented, deterministic order, because the
agents' output (evidence numbering, prompts) follows the order of what the
graph returns, and the same case must give the same run.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping

from worker.agents.graph_types import (
    ArticleNode,
    ArticleText,
    CaseNode,
    ChecklistEntry,
    CommunityNode,
    InterpretationNode,
    Term,
)
from worker.agents.numerals import article_label

CRIMINAL_LAW = "中华人民共和国刑法"


def _require_new(table: Mapping[int, object], pk: int, what: str) -> None:
    if pk in table:
        raise ValueError(f"{what} {pk} already exists")


def _require(table: Mapping[int, object], pk: int, what: str) -> None:
    # Builders fail loudly on dangling references: a fixture that silently
    # points at nothing would make a reasoning test pass for the wrong reason.
    if pk not in table:
        raise KeyError(f"unknown {what} {pk}")


def _in_statute_order(articles: Iterable[ArticleNode]) -> list[ArticleNode]:
    """Articles as a statute prints them (133 before 133-1 before 134), whatever order they were imported in."""
    return sorted(articles, key=lambda a: (a.law, a.number, a.sub, a.pk))


class InMemoryGraphStore:
    """Fact, Ontology and Rule graphs in memory; implements ports.GraphStore."""

    def __init__(self) -> None:
        self._articles: dict[int, ArticleNode] = {}
        self._texts: dict[int, ArticleText] = {}  # by version_pk
        self._checklist: dict[int, ChecklistEntry] = {}  # by entry pk
        self._interpretations: dict[int, InterpretationNode] = {}
        self._interprets: dict[int, set[int]] = {}  # interpretation pk -> article pks
        self._cases: dict[int, CaseNode] = {}
        self._similar: dict[int, dict[int, float]] = {}  # case pk -> {neighbour pk: score}
        self._communities: dict[int, CommunityNode] = {}
        self._community_of: dict[int, int] = {}  # case pk -> community pk
        self._refers: dict[int, set[int]] = {}  # article pk -> article pks it refers to

    # ------------------------------------------------------------------ builders

    def add_article(
        self,
        pk: int,
        number: int,
        *,
        sub: int = 0,
        law: str = CRIMINAL_LAW,
        label: str | None = None,
        charges: Iterable[str] = (),
    ) -> ArticleNode:
        """An Article node; ``charges`` become DEFINES edges to Offence nodes (kept sorted, like the AGE store)."""
        _require_new(self._articles, pk, "article")
        node = ArticleNode(
            pk=pk,
            law=law,
            number=number,
            sub=sub,
            label=label if label is not None else article_label(number, sub),
            charges=tuple(sorted(set(charges))),
        )
        self._articles[pk] = node
        return node

    def add_article_text(
        self,
        version_pk: int,
        article_pk: int,
        text: str,
        *,
        valid_from: dt.date | None = None,
        valid_to: dt.date | None = None,
    ) -> ArticleText:
        """One version of an article's text, valid over [valid_from, valid_to] (None = open)."""
        _require(self._articles, article_pk, "article")
        _require_new(self._texts, version_pk, "article version")
        if valid_from is not None and valid_to is not None and valid_to < valid_from:
            raise ValueError(f"version {version_pk}: valid_to {valid_to} before valid_from {valid_from}")
        version = ArticleText(version_pk, article_pk, text, valid_from, valid_to)
        self._texts[version_pk] = version
        return version

    def add_checklist(
        self, version_pk: int, questions: Iterable[str], *, first_pk: int | None = None
    ) -> list[ChecklistEntry]:
        """The checklist of one article version, ordered 1..n as given.

        Entry pks are consecutive from ``first_pk`` (default: one past the
        largest pk so far), so fixtures stay readable and deterministic.
        """
        _require(self._texts, version_pk, "article version")
        if any(entry.version_pk == version_pk for entry in self._checklist.values()):
            raise ValueError(f"version {version_pk} already has a checklist")
        next_pk = first_pk if first_pk is not None else max(self._checklist, default=0) + 1
        entries = []
        for order, question in enumerate(questions, start=1):
            _require_new(self._checklist, next_pk, "checklist entry")
            entry = ChecklistEntry(pk=next_pk, version_pk=version_pk, order=order, question=question)
            self._checklist[next_pk] = entry
            entries.append(entry)
            next_pk += 1
        return entries

    def add_interpretation(
        self, pk: int, source: str, para: str, text: str, article_pks: Iterable[int]
    ) -> InterpretationNode:
        """An Interpretation node with INTERPRETS edges to the given articles."""
        _require_new(self._interpretations, pk, "interpretation")
        targets = set(article_pks)
        for article_pk in targets:
            _require(self._articles, article_pk, "article")
        node = InterpretationNode(pk=pk, source=source, para=para, text=text)
        self._interpretations[pk] = node
        self._interprets[pk] = targets
        return node

    def add_case(
        self,
        pk: int,
        ext_id: str,
        *,
        charges: Iterable[str] = (),
        article_pks: Iterable[int] = (),
        term: Term | None = None,
        court_level: str = "",
        features: Mapping[str, Iterable[str]] | None = None,
    ) -> CaseNode:
        """A Case node: CONVICTED_OF its charges, CITES its articles, HAS_FEATURE its features.

        Charges and article pks are stored sorted and de-duplicated: graph edges
        carry no order, so the AGE store cannot give back the input order either.
        """
        _require_new(self._cases, pk, "case")
        article_pks = tuple(sorted(set(article_pks)))
        for article_pk in article_pks:
            _require(self._articles, article_pk, "article")
        node = CaseNode(
            pk=pk,
            ext_id=ext_id,
            charges=tuple(sorted(set(charges))),
            article_pks=article_pks,
            term=term,
            court_level=court_level,
            features={dim: tuple(values) for dim, values in (features or {}).items()},
        )
        self._cases[pk] = node
        return node

    def add_similarity(self, a: int, b: int, score: float) -> None:
        """A directed SIMILAR_TO edge a -> b (kNN edges are directed); re-adding replaces the score."""
        _require(self._cases, a, "case")
        _require(self._cases, b, "case")
        if a == b:
            raise ValueError(f"case {a} cannot be similar to itself")
        self._similar.setdefault(a, {})[b] = float(score)

    def add_community(
        self, pk: int, *, summary: str, level: int = 0, top_charges: Iterable[str] = (), members: Iterable[int] = ()
    ) -> CommunityNode:
        """A Community node; ``members`` are put IN_COMMUNITY it (see set_community)."""
        _require_new(self._communities, pk, "community")
        node = CommunityNode(pk=pk, level=level, size=0, summary=summary, top_charges=tuple(top_charges))
        self._communities[pk] = node
        for case_pk in members:
            self.set_community(case_pk, pk)
        return node

    def set_community(self, case_pk: int, community_pk: int) -> None:
        """Put a case in a community, moving it out of any previous one (one community per level)."""
        _require(self._cases, case_pk, "case")
        _require(self._communities, community_pk, "community")
        self._community_of[case_pk] = community_pk

    def add_reference(self, a: int, b: int) -> None:
        """A directed REFERS_TO edge: article a's text refers to article b."""
        _require(self._articles, a, "article")
        _require(self._articles, b, "article")
        if a == b:
            raise ValueError(f"article {a} cannot refer to itself")
        self._refers.setdefault(a, set()).add(b)

    # ---------------------------------------------------------------- Fact graph

    def case(self, case_pk: int) -> CaseNode | None:
        """The case, or None when there is no such case."""
        return self._cases.get(case_pk)

    def cases(self, case_pks) -> list[CaseNode]:
        """The cases that exist among ``case_pks``, by pk ascending."""
        return [self._cases[pk] for pk in sorted({int(p) for p in case_pks}) if pk in self._cases]

    def cases_of_offence(self, charge: str, limit: int = 50) -> list[CaseNode]:
        """Cases convicted of ``charge`` (exact name), by pk ascending, at most ``limit``."""
        if limit <= 0:
            return []
        matching = (self._cases[pk] for pk in sorted(self._cases) if charge in self._cases[pk].charges)
        return [case for _, case in zip(range(limit), matching)]

    def articles_of_case(self, case_pk: int) -> list[ArticleNode]:
        """Articles the case cites, in statute order (law, number, sub, pk); [] for an unknown case."""
        case = self._cases.get(case_pk)
        if case is None:
            return []
        return _in_statute_order(self._articles[pk] for pk in case.article_pks)

    def articles_defining(self, charge: str) -> list[ArticleNode]:
        """Articles that define ``charge`` (exact name), in statute order (law, number, sub, pk)."""
        return _in_statute_order(a for a in self._articles.values() if charge in a.charges)

    def offences(self) -> list[str]:
        """Every Offence node's name, sorted by code point, no duplicates.

        Offence nodes are the charges defined by articles and those cases were
        convicted of (a precedent may name a charge no loaded article defines).
        """
        names = {c for article in self._articles.values() for c in article.charges}
        names.update(c for case in self._cases.values() for c in case.charges)
        return sorted(names)

    # ------------------------------------------------------------ Ontology graph

    def neighbours(self, case_pk: int) -> list[tuple[int, float]]:
        """Outgoing SIMILAR_TO edges as (case pk, score), score descending then pk ascending."""
        edges = self._similar.get(case_pk, {})
        return sorted(edges.items(), key=lambda pair: (-pair[1], pair[0]))

    def communities(self) -> list[CommunityNode]:
        """Every community by pk ascending; ``size`` is its current member count."""
        sizes: dict[int, int] = {}
        for community_pk in self._community_of.values():
            sizes[community_pk] = sizes.get(community_pk, 0) + 1
        return [
            CommunityNode(
                pk=node.pk, level=node.level, size=sizes.get(pk, 0), summary=node.summary, top_charges=node.top_charges
            )
            for pk, node in sorted(self._communities.items())
        ]

    def community_members(self, community_pk: int) -> list[int]:
        """Case pks in the community, ascending; [] for an unknown community."""
        return sorted(case_pk for case_pk, pk in self._community_of.items() if pk == community_pk)

    def community_of(self, case_pk: int) -> int | None:
        """The case's community pk, or None (unknown case, or not yet assigned)."""
        return self._community_of.get(case_pk)

    # ---------------------------------------------------------------- Rule graph

    def article(self, article_pk: int) -> ArticleNode | None:
        """The article, or None when there is no such article."""
        return self._articles.get(article_pk)

    def prefetch_articles(self, article_pks) -> None:
        """Nothing to do: everything is in memory already."""

    def prefetch_articles_of_cases(self, case_pks) -> None:
        """Nothing to do: everything is in memory already."""

    def prefetch_offences(self, charges, *, with_cases=(), cases_limit: int = 50) -> None:
        """Nothing to do: everything is in memory already."""

    def article_texts(self, article_pk: int) -> list[ArticleText]:
        """Every version of the article, oldest first: valid_from ascending (None first), then version pk."""
        versions = [v for v in self._texts.values() if v.article_pk == article_pk]
        return sorted(versions, key=lambda v: (v.valid_from is not None, v.valid_from or dt.date.min, v.version_pk))

    def _current_version(self, article_pk: int) -> int | None:
        """The version in force now (open-ended), else the latest one: what an undated question means."""
        versions = self.article_texts(article_pk)
        if not versions:
            return None
        in_force = [v for v in versions if v.valid_to is None]
        return (in_force or versions)[-1].version_pk

    def checklist(self, article_pk: int, version_pk: int | None = None) -> list[ChecklistEntry]:
        """Checklist of one version of the article, by order then pk.

        ``version_pk`` None means the current version (open-ended validity;
        if none is open-ended, the latest). A version of another article
        gives [], never that article's checklist.
        """
        if version_pk is None:
            version_pk = self._current_version(article_pk)
        version = self._texts.get(version_pk) if version_pk is not None else None
        if version is None or version.article_pk != article_pk:
            return []
        entries = [e for e in self._checklist.values() if e.version_pk == version_pk]
        return sorted(entries, key=lambda e: (e.order, e.pk))

    def interpretations(self, article_pk: int) -> list[InterpretationNode]:
        """Interpretations with an INTERPRETS edge to the article, by pk ascending."""
        return [self._interpretations[pk] for pk in sorted(self._interpretations) if article_pk in self._interprets[pk]]

    def interpreted_articles(self, interpretation_pk: int) -> list[ArticleNode]:
        return _in_statute_order(self._articles[pk] for pk in sorted(self._interprets.get(interpretation_pk, ())))

    def all_interpretations(self) -> list[InterpretationNode]:
        return [self._interpretations[pk] for pk in sorted(self._interpretations)]

    def opening_with(self, opening: str) -> list[tuple[ArticleNode, str]]:
        """The articles whose text in force now (open-ended) opens with ``opening`` (a regular expression), with
        it, in statute order."""
        found = []
        for node in _in_statute_order(self._articles.values()):
            text = next((v.text for v in reversed(self.article_texts(node.pk)) if v.valid_to is None), "")
            if re.match(opening, text):
                found.append((node, text))
        return found

    def references(self, article_pk: int) -> list[ArticleNode]:
        """Articles this article REFERS_TO (outgoing edges only), in statute order (law, number, sub, pk)."""
        return _in_statute_order(self._articles[pk] for pk in self._refers.get(article_pk, ()))

    def referring(self, article_pks) -> dict[int, list[ArticleNode]]:
        """Per article pk, the articles that REFER_TO it (incoming edges), in statute order; pks none
        refers to are left out."""
        wanted = {int(pk) for pk in article_pks}
        found: dict[int, list[ArticleNode]] = {}
        for source, targets in self._refers.items():
            for pk in targets & wanted:
                found.setdefault(pk, []).append(self._articles[source])
        return {pk: _in_statute_order(nodes) for pk, nodes in found.items()}
