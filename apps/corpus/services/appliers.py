"""Write validated corpus records into the database.

Each applier runs inside the import's transaction and returns counts. A record
that conflicts with what is stored raises ImportValidationError naming its
line; nothing is written then (the caller's transaction rolls back).
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable, Sequence

from apps.corpus.models import (
    CRIMINAL_LAW,
    Article,
    ArticleVersion,
    Charge,
    ChecklistItem,
    ImportBatch,
    Interpretation,
    Law,
    Precedent,
    PrecedentOutcome,
)
from lexlib.parsing.errors import ImportValidationError, LineError
from worker.agents.jsonhash import sha256_text
from worker.agents.numerals import article_key, article_label, find_article_ranges, find_article_refs, in_ranges

Progress = Callable[[int, int], None] | None
Numbered = Sequence[tuple[int, object]]


def text_diff(old: str, new: str) -> str:
    return "\n".join(difflib.unified_diff(old.splitlines() or [old], new.splitlines() or [new], "stored", "uploaded", lineterm="", n=1))


def _tick(progress: Progress, done: int, total: int) -> None:
    if progress is not None and (done % 200 == 0 or done == total):
        progress(done, total)


def _fail_if(errors: list[LineError]) -> None:
    if errors:
        raise ImportValidationError(errors)


class _Laws:
    def __init__(self):
        self._cache: dict[str, Law] = {}

    def get(self, title: str) -> Law:
        if title not in self._cache:
            self._cache[title] = Law.objects.get_or_create(title=title)[0]
        return self._cache[title]


def _article(law: Law, number: int, sub: int, label: str = "") -> Article:
    article, _ = Article.objects.get_or_create(
        law=law, number=number, sub=sub,
        defaults={"key": article_key(number, sub), "label": label or article_label(number, sub)},
    )
    return article


def _charge(name: str, cache: dict[str, Charge], *, official: bool = False) -> Charge:
    charge = cache.get(name)
    if charge is None:
        charge, _ = Charge.objects.get_or_create(name=name, defaults={"official": official})
        cache[name] = charge
    if official and not charge.official:
        charge.official = True
        charge.save(update_fields=["official"])
    return charge


def apply_statutes(records: Numbered, *, batch: ImportBatch, amendment: bool = False, progress: Progress = None) -> dict:
    """Plan and apply in one go; a refused record fails the file (used where no dry run came first)."""
    from apps.corpus.services.planning import statutes_plan

    plan = statutes_plan(list(records), amendment=amendment)
    _fail_if(plan.refused)
    return apply_statute_plan(plan, batch=batch, progress=progress)


def apply_statute_plan(plan, *, batch: ImportBatch, progress: Progress = None) -> dict:
    """Carry out a statutes_plan: refused records are left out (the caller decided to publish without them)."""
    laws = _Laws()
    charges: dict[str, Charge] = {}
    counts = {"added": 0, "amended": 0, "unchanged": 0}
    touched: list[tuple[Article, str]] = []
    # statutes_plan numbers a new version by its record's position, which is its action's position.
    created: dict[int, ArticleVersion] = {}
    for done, (index, action) in enumerate(enumerate(plan.actions), 1):
        if action.action == "refuse":
            continue
        rec = action.record
        law = laws.get(rec.law or CRIMINAL_LAW)
        article = _article(law, rec.number, rec.sub, rec.label)
        if action.action == "unchanged":
            counts["unchanged"] += 1
        else:
            previous = None
            if action.previous is not None:
                previous = (ArticleVersion.objects.get(pk=action.previous.pk) if action.previous.pk is not None
                            else created[action.previous.index])
            if action.close_previous:
                previous.valid_to = rec.valid_from - dt.timedelta(days=1)
                previous.save(update_fields=["valid_to"])
            created[index] = ArticleVersion.objects.create(
                article=article, text=rec.text, text_sha256=sha256_text(rec.text), gloss_en=rec.gloss_en or "",
                part=rec.part or "", chapter=rec.chapter or "", section=rec.section or "", topic=rec.topic or "",
                repealed=rec.repealed, valid_from=rec.valid_from, valid_to=rec.valid_to,
                text_source=getattr(rec, "text_source", "") or "", batch=batch, supersedes=previous,
            )
            counts["amended" if action.action == "amend" else "added"] += 1
        for name in rec.charges:
            _charge(name, charges, official=True).articles.add(article)
        touched.append((article, rec.text))
        _tick(progress, done, len(plan.actions))
    counts["references"] = _link_references(touched)
    return counts


def _link_references(touched: list[tuple[Article, str]]) -> int:
    """Article–REFERS_TO→Article edges from 依照本法第…条 style mentions in the text; a range ("第一百四十条至
    第一百四十八条") refers to every article in it, sub-articles included."""
    linked = 0
    for article, text in touched:
        own = (article.number, article.sub)
        targets = {(n, s) for n, s in find_article_refs(text)} - {own}
        ranges = find_article_ranges(text)
        if not targets and not ranges:
            continue
        numbers = {n for n, _ in targets} | {n for start, end in ranges for n in range(start[0], end[0] + 1)}
        found = [a for a in Article.objects.filter(law=article.law, number__in=numbers)
                 if (a.number, a.sub) != own and ((a.number, a.sub) in targets or in_ranges((a.number, a.sub), ranges))]
        article.refers_to.add(*found)
        linked += len(found)
    return linked + _link_into_ranges(touched)


def _link_into_ranges(touched: list[tuple[Article, str]]) -> int:
    """A touched article inside the range of a provision imported before it (an article added by an
    amendment, or statutes imported in several files) is referred to by that provision too. A touched
    provision has linked its own range already (_link_references)."""
    touched_pks = {a.pk for a, _ in touched}
    linked = 0
    versions = (ArticleVersion.objects.filter(valid_to__isnull=True, text__contains="条至第")
                .exclude(article_id__in=touched_pks).select_related("article"))
    for version in versions:
        source, ranges = version.article, find_article_ranges(version.text)
        inside = [a for a, _ in touched if a.law_id == source.law_id and in_ranges((a.number, a.sub), ranges)]
        if inside:
            source.refers_to.add(*inside)
            linked += len(inside)
    return linked


def apply_interpretations(records: Numbered, *, batch: ImportBatch, amendment: bool = False, progress: Progress = None) -> dict:
    laws = _Laws()
    counts = {"added": 0, "unchanged": 0, "links": 0}
    errors: list[LineError] = []
    existing = {i.ext_id: i for i in Interpretation.objects.filter(ext_id__in=[r.id for _, r in records])}
    for done, (line, rec) in enumerate(records, 1):
        sha = sha256_text(rec.text)
        stored = existing.get(rec.id)
        if stored is not None:
            if stored.text_sha256 == sha:
                counts["unchanged"] += 1
            else:
                errors.append(LineError(line, f"interpretation {rec.id} already exists with a different text:\n{text_diff(stored.text, rec.text)}"))
            continue
        interp = Interpretation.objects.create(
            ext_id=rec.id, source=rec.source, para=rec.para or "", text=rec.text, text_sha256=sha,
            gloss_en=getattr(rec, "gloss_en", "") or "", batch=batch,
        )
        # Linked by (law, number): an interpretation of another law's article N
        # never attaches to the Criminal Law's article N.
        law = laws.get(getattr(rec, "law", None) or CRIMINAL_LAW)
        targets = [_article(law, n, 0) for n in rec.articles]
        interp.articles.add(*targets)
        counts["added"] += 1
        counts["links"] += len(targets)
        _tick(progress, done, len(records))
    _fail_if(errors)
    return counts


def current_version(article: Article) -> ArticleVersion | None:
    return article.versions.filter(valid_to__isnull=True).first() or article.versions.order_by("-valid_from").first()


def sibling_charges(article: Article) -> set[str]:
    """The charges the other provisions of the same article number define (390之一's for 390, 390's for 390之一)."""
    siblings = Article.objects.filter(law=article.law_id, number=article.number).exclude(pk=article.pk)
    return set(Charge.objects.filter(articles__in=siblings).values_list("name", flat=True))


def apply_checklists(records: Numbered, *, batch: ImportBatch, amendment: bool = False, progress: Progress = None) -> dict:
    law = _Laws().get(CRIMINAL_LAW)
    charges: dict[str, Charge] = {}
    counts = {"checklists": 0, "items": 0, "unchanged": 0, "replaced": 0}
    errors: list[LineError] = []
    articles = {(a.number, a.sub): a for a in Article.objects.filter(law=law)}
    interps = {i.ext_id: i for i in Interpretation.objects.all().only("id", "ext_id")}
    for done, (line, rec) in enumerate(records, 1):
        article = articles.get((rec.article, rec.sub))
        version = current_version(article) if article else None
        if version is None:
            errors.append(LineError(line, f"no statute text for article {article_key(rec.article, rec.sub)}: import the statutes first"))
            continue
        wanted = {"main": list(rec.items), "alt": list(rec.items_alt or [])}
        glosses = list(getattr(rec, "gloss_en", None) or [])
        stored = {}
        for item in version.checklist.filter(origin=ChecklistItem.Origin.IMPORTED):
            stored.setdefault(item.variant, []).append(item.question)
        if {k: v for k, v in stored.items() if v} == {k: v for k, v in wanted.items() if v}:
            counts["unchanged"] += 1
        elif stored and not amendment:
            errors.append(LineError(line, f"{article.label} already has a different imported checklist; upload it as an amendment to replace it"))
            continue
        else:
            if stored:
                version.checklist.filter(origin=ChecklistItem.Origin.IMPORTED).delete()
                counts["replaced"] += 1
            items = [
                ChecklistItem(article_version=version, order=i, question=q, variant=variant, batch=batch,
                              gloss_en=glosses[i] if variant == "main" and i < len(glosses) else "")
                for variant, questions in wanted.items() for i, q in enumerate(questions)
            ]
            ChecklistItem.objects.bulk_create(items)
            counts["checklists"] += 1
            counts["items"] += len(items)
        # A checklist's charges are article-level (they include the sub-articles'
        # charges); the statute provision's own list is precise, so it wins. Without
        # one, a charge a sibling provision defines is the sibling's: 390 (the
        # punishment of 行贿罪) does not define 390之一's 对有影响力的人行贿罪.
        if not article.charges.exists():
            theirs = sibling_charges(article)
            for name in rec.charges:
                if name not in theirs:
                    _charge(name, charges, official=True).articles.add(article)
        related = [interps[r.interpretation_id] for r in rec.related if r.interpretation_id in interps]
        if related:
            article.interpretations.add(*related)
        _tick(progress, done, len(records))
    _fail_if(errors)
    return counts


def apply_cases(records: Numbered, *, batch: ImportBatch, amendment: bool = False, progress: Progress = None) -> dict:
    """Plan and apply in one go; a refused record fails the file (used where no dry run came first)."""
    from apps.corpus.services.planning import cases_plan

    plan = cases_plan(list(records))
    _fail_if(plan.refused)
    return apply_case_plan(plan, batch=batch, progress=progress)


def _duplicate_ref(action) -> dict:
    ref = {"id": action.record.id, "source": action.record.source, "how": action.how}
    if action.how == "near":
        ref["near"] = True
        ref["containment"] = action.containment
    return ref


def apply_case_plan(plan, *, batch: ImportBatch, progress: Progress = None) -> dict:
    """Carry out a cases_plan: add the new precedents, record the merged ones on what they duplicate."""
    from lexlib.parsing.dedup import norm_sha256

    law = _Laws().get(CRIMINAL_LAW)
    articles = {a.number: a for a in Article.objects.filter(law=law, sub=0)}
    charges = {c.name: c for c in Charge.objects.all()}
    counts = {"added": 0, "unchanged": 0, "merged": 0, "outcomes": 0, "new_charge_names": 0}
    added = plan.of("add")
    merged = plan.of("merge")
    counts["unchanged"] = len(plan.of("unchanged"))
    counts["merged"] = len(merged)
    fresh: list[tuple[object, Precedent]] = []
    by_line: dict[int, Precedent] = {}
    for action in added:
        rec = action.record
        # Duplicates the source itself merged (shared/data's `duplicates`) are kept as provenance.
        extra = {"duplicates": [{"id": d.id, "source": d.source, **({"near": True} if d.near else {})} for d in rec.duplicates]}
        precedent = Precedent(
            ext_id=rec.id, source=rec.source, fact=rec.fact, fact_sha256=sha256_text(rec.fact),
            fact_norm_sha256=norm_sha256(rec.fact), defendants=list(rec.defendants),
            court_level=getattr(rec, "court_level", None) or "", label_source=rec.label_source or "",
            origin=rec.origin or {}, fine=rec.fine, gloss_en=getattr(rec, "gloss_en", "") or "", batch=batch,
            extra=extra if rec.duplicates else {},
        )
        fresh.append((rec, precedent))
        by_line[action.line] = precedent
    into_stored: dict[int, list[dict]] = {}
    for action in merged:
        ref = {**_duplicate_ref(action), "batch": batch.pk}
        if action.target_pk:
            into_stored.setdefault(action.target_pk, []).append(ref)
        else:
            kept = by_line[action.target_line]
            kept.extra = {**kept.extra, "duplicates": [*kept.extra.get("duplicates", []), ref]}

    Precedent.objects.bulk_create([p for _, p in fresh], batch_size=1000)
    if into_stored:
        targets = list(Precedent.objects.filter(pk__in=into_stored).only("pk", "extra"))
        for target in targets:
            target.extra = {**target.extra, "duplicates": [*target.extra.get("duplicates", []), *into_stored[target.pk]]}
        Precedent.objects.bulk_update(targets, ["extra"], batch_size=1000)
    outcomes: list[tuple[PrecedentOutcome, list[str], list[int]]] = []
    for rec, precedent in fresh:
        for position, (name, names, arts, term) in enumerate(_outcomes_of(rec)):
            outcome = PrecedentOutcome(
                precedent=precedent, position=position, defendant=name[:100],
                unresolved_articles=[n for n in arts if n not in articles],
                term_known=term is not None,
                term_months=term.months if term else None,
                life=bool(term and term.life), death=bool(term and term.death),
                term_kind=(term.kind or "") if term else "", suspended=term.suspended if term else None,
            )
            outcomes.append((outcome, names, arts))
    PrecedentOutcome.objects.bulk_create([o for o, _, _ in outcomes], batch_size=2000)

    charge_links, article_links = [], []
    ChargeLink = PrecedentOutcome.charges.through
    ArticleLink = PrecedentOutcome.articles.through
    for outcome, names, arts in outcomes:
        for name in dict.fromkeys(names):
            if name not in charges:
                charges[name] = Charge.objects.create(name=name, official=False)
                counts["new_charge_names"] += 1
            charge_links.append(ChargeLink(precedentoutcome_id=outcome.pk, charge_id=charges[name].pk))
        for number in dict.fromkeys(arts):
            if number in articles:
                article_links.append(ArticleLink(precedentoutcome_id=outcome.pk, article_id=articles[number].pk))
    ChargeLink.objects.bulk_create(charge_links, batch_size=5000)
    ArticleLink.objects.bulk_create(article_links, batch_size=5000)
    counts["added"] = len(fresh)
    counts["outcomes"] = len(outcomes)
    if progress:
        progress(len(plan.actions), len(plan.actions))
    return counts


def _outcomes_of(rec) -> list[tuple[str, list[str], list[int], object]]:
    """Per-defendant outcomes when the source gives them, else one for the whole case."""
    if rec.per_defendant:
        return [(d.name, list(d.charges), list(rec.articles), d.term) for d in rec.per_defendant]
    return [("、".join(rec.defendants), list(rec.charges), list(rec.articles), rec.term)]


def apply_charge_table(mapping: dict, *, batch: ImportBatch, amendment: bool = False, progress: Progress = None) -> dict:
    """charge_categories.json ({category: [names]}), charge_aliases.json ({alias: target|null})
    or the demo's charges.json ({"categories": …, "aliases": …})."""
    cache: dict[str, Charge] = {}
    counts = {"categorised": 0, "aliases": 0}
    categories = mapping.get("categories", {}) if "categories" in mapping else {k: v for k, v in mapping.items() if isinstance(v, list)}
    aliases = mapping.get("aliases", {}) if "aliases" in mapping else {k: v for k, v in mapping.items() if not isinstance(v, list)}
    for category, names in categories.items():
        for name in names:
            charge = _charge(name, cache)
            if category not in charge.categories:
                charge.categories = [*charge.categories, category]
                charge.save(update_fields=["categories"])
            counts["categorised"] += 1
    for alias, target in aliases.items():
        charge = _charge(alias, cache)
        canonical = _charge(target, cache) if target else None
        if charge.canonical_id != (canonical.pk if canonical else None):
            charge.canonical = canonical
            charge.save(update_fields=["canonical"])
        counts["aliases"] += 1
    return counts
