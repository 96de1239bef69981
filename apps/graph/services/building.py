"""Build the Ontology graph (features, kNN, Leiden communities) and project everything into AGE.

`graph_build` is the explicit full rebuild (`manage.py build_graph`);
`graph_cases_add` is the incremental path used when precedents are imported
after a build: features, kNN edges to the existing cases and a community by
neighbour majority, without re-clustering.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.caching import generation_bump
from apps.core.dbstats import tables_analyze
from apps.corpus.models import Precedent, PrecedentOutcome, SearchIndex
from apps.corpus.services.importing import CORPUS_MODELS
from lexlib.search.embeddings import LSABackend
from lexlib.search.tokenize import Tokenizer
from lexlib import clustering
from apps.graph.models import CaseFeatures, Community, CommunityMembership, Feature, GraphBuild, Similarity
from apps.graph.services.projection import graph_project_all, graph_sync
from worker.agents.stages.features import LexiconFeatureExtractor

log = logging.getLogger(__name__)
Progress = Callable[[str], None] | None

DEFAULTS = {"k": 3, "resolution": 1.0, "seed": 42, "dim": 128, "min_community": 3}


@contextmanager
def _timed(timings: dict, name: str, progress: Progress):
    if progress:
        progress(name)
    start = time.perf_counter()
    yield
    timings[name] = round(time.perf_counter() - start, 2)


def _features_for(precedents: Iterable[tuple[int, str]], extractor) -> dict[int, object]:
    return {pk: extractor.extract(fact) for pk, fact in precedents}


def _store_features(extracted: dict[int, object], extractor: str) -> None:
    """CaseFeatures rows, Feature vocabulary and the M2M links, in bulk."""
    wanted = {(d, n) for f in extracted.values() for d, n in f.labels()}
    known = {(f.dimension, f.name): f.pk for f in Feature.objects.all()}
    Feature.objects.bulk_create([Feature(dimension=d, name=n) for d, n in sorted(wanted - set(known))], batch_size=2000)
    known = {(f.dimension, f.name): f.pk for f in Feature.objects.all()}
    CaseFeatures.objects.filter(precedent_id__in=list(extracted)).delete()
    rows = CaseFeatures.objects.bulk_create(
        [CaseFeatures(precedent_id=pk, text=f.text(), extractor=extractor) for pk, f in extracted.items()], batch_size=2000
    )
    Link = CaseFeatures.features.through
    Link.objects.bulk_create(
        [Link(casefeatures_id=row.pk, feature_id=known[label]) for row, f in zip(rows, extracted.values())
         for label in dict.fromkeys(f.labels())],
        batch_size=5000,
    )


def _case_charges(pks: list[int]) -> dict[int, list[str]]:
    charges = defaultdict(set)
    for pk, name in PrecedentOutcome.charges.through.objects.filter(precedentoutcome__precedent_id__in=pks).values_list(
        "precedentoutcome__precedent_id", "charge__name"
    ):
        charges[pk].add(name)
    return {pk: sorted(charges[pk]) for pk in pks}


def _ontology_model_dir(backend: LSABackend) -> Path:
    # Content-addressed: several databases (dev, tests, benchmarks) may share MEDIA_ROOT.
    return Path(settings.MEDIA_ROOT) / "models" / f"ontology-{backend.model_id}"


def ontology_backend() -> LSABackend | None:
    """The embedding model of the active feature index (for queries and incremental adds)."""
    from apps.corpus.search_service import active_index, dense_backend_for

    index = active_index(SearchIndex.Target.FEATURES, SearchIndex.Method.DENSE)
    return dense_backend_for(index) if index is not None and index.artefact_dir else None


def graph_build(*, k: int = DEFAULTS["k"], resolution: float = DEFAULTS["resolution"], seed: int = DEFAULTS["seed"],
                dim: int = DEFAULTS["dim"], extractor=None, progress: Progress = None) -> GraphBuild:
    """Full rebuild of the ontology graph and the AGE projection.

    ``extractor`` produces the ontology features (``.extract(text)``, ``.version``):
    the statistical lexicon by default, or worker.agents.stages.features.LLMFeatureExtractor.
    """
    from apps.corpus.services.indexing import dense_index_from_vectors

    extractor = extractor or LexiconFeatureExtractor()
    build = GraphBuild.objects.create(params={"k": k, "resolution": resolution, "seed": seed, "dim": dim,
                                              "extractor": extractor.version})
    timings: dict[str, float] = {}
    try:
        rows = list(Precedent.objects.order_by("pk").values_list("pk", "fact"))
        pks = [pk for pk, _ in rows]
        with _timed(timings, "features", progress):
            extracted = _features_for(rows, extractor)
        with _timed(timings, "features_store", progress):
            with transaction.atomic():
                _store_features(extracted, extractor.version)
        texts = [extracted[pk].text() for pk in pks]
        with _timed(timings, "embed", progress):
            # The ontology texts are short label lists: a plain tokenizer without the legal dictionary suffices.
            backend = LSABackend(dim=min(dim, max(2, len(pks) - 1)), min_df=1, seed=seed, tokenizer=Tokenizer(user_dict=None))
            backend.fit(texts)
            vectors = backend.embed_passages(texts)
        with _timed(timings, "knn", progress):
            edges = clustering.knn_edges(vectors, k=k)
        with _timed(timings, "leiden", progress):
            membership = clustering.leiden_communities(len(pks), edges, resolution=resolution, seed=seed,
                                                       min_size=DEFAULTS["min_community"])
        charges = _case_charges(pks)
        with _timed(timings, "store", progress):
            with transaction.atomic():
                directory = _ontology_model_dir(backend)
                backend.save(directory)
                dense_index_from_vectors(target=SearchIndex.Target.FEATURES, backend_name="lsa", model_id=backend.model_id,
                                         artefact_dir=str(directory), ids=pks, vectors=vectors)
                _store_similarities(pks, edges)
                _store_communities(pks, membership, charges, extracted, backend)
        with _timed(timings, "project", progress):
            tables_analyze(*CORPUS_MODELS, Feature, CaseFeatures, Similarity, Community, CommunityMembership)
            counts = graph_project_all()
        report = clustering.community_report(membership, [charges[pk] for pk in pks])
        build.stats = {"graph": counts, "communities": _report_for_page(report)}
        build.status = GraphBuild.Status.DONE
    except Exception:
        build.status = GraphBuild.Status.FAILED
        raise
    finally:
        build.timings = timings
        build.finished_at = timezone.now()
        build.save()
        generation_bump()  # communities and features were replaced, whether or not the build finished
    # The statistics page's counts, counted now rather than by its first reader.
    from apps.graph.selectors import graph_counts

    graph_counts()
    return build


def _report_for_page(report: dict) -> dict:
    share = report.get("top_charge_agreement", 0.0)
    return {**report, "top_charge_share_pct": round(100 * float(share), 1),
            "sizes": {k: report[k] for k in ("size_min", "size_median", "size_max") if k in report}}


def _store_similarities(pks: list[int], edges) -> None:
    Similarity.objects.all().delete()
    ranks = defaultdict(int)
    objs = []
    for src, dst, score in edges:
        ranks[src] += 1
        objs.append(Similarity(source_id=pks[src], target_id=pks[dst], score=float(score), rank=ranks[src]))
    Similarity.objects.bulk_create(objs, batch_size=5000)


def _store_communities(pks, membership, charges, extracted, backend) -> None:
    Community.objects.all().delete()
    members = defaultdict(list)
    for row, community in enumerate(membership):
        members[community].append(row)
    created = {}
    summaries = {}
    for number in sorted(members):
        rows = members[number]
        summary = clustering.summarize_community(
            [charges[pks[r]] for r in rows], [[n for _, n in extracted[pks[r]].labels()] for r in rows], [pks[r] for r in rows]
        )
        summaries[number] = summary
        created[number] = Community(level=0, number=number, size=summary.size, summary=summary.text,
                                    top_charges=[list(x) for x in summary.top_charges],
                                    top_features=[list(x) for x in summary.top_features],
                                    representatives=list(summary.representative_ids), embedding_model=backend.model_id)
    ordered = [created[n] for n in sorted(created)]
    if ordered:
        vectors = backend.embed_passages([c.summary for c in ordered])
        for community, vector in zip(ordered, vectors):
            community.embedding = vector
    Community.objects.bulk_create(ordered, batch_size=1000)
    CommunityMembership.objects.bulk_create(
        [CommunityMembership(community=created[c], precedent_id=pks[row]) for row, c in enumerate(membership)], batch_size=5000
    )


def graph_cases_add(pks: list[int], *, k: int | None = None) -> int:
    """Incremental path: give new precedents features, kNN edges and a community; project them.

    Runs in the caller's transaction. Does nothing before the first full build.
    """
    backend = ontology_backend()
    build = GraphBuild.objects.filter(status=GraphBuild.Status.DONE).first()
    if backend is None or build is None or not pks:
        return 0
    from apps.corpus.models import DenseVector

    k = k or build.params.get("k", DEFAULTS["k"])
    # Incremental adds use the statistical extractor: an import must not wait on a model server.
    extractor = LexiconFeatureExtractor()
    rows = list(Precedent.objects.filter(pk__in=pks).order_by("pk").values_list("pk", "fact"))
    new_pks = [pk for pk, _ in rows]
    extracted = _features_for(rows, extractor)
    _store_features(extracted, extractor.version)
    new_vectors = backend.embed_passages([extracted[pk].text() for pk in new_pks])

    index = SearchIndex.objects.get(target=SearchIndex.Target.FEATURES, method=SearchIndex.Method.DENSE, active=True)
    existing = list(DenseVector.objects.filter(index=index).exclude(object_id__in=new_pks).order_by("object_id").values_list("object_id", "vector"))
    old_pks = [pk for pk, _ in existing]
    old_vectors = np.array([v for _, v in existing], dtype=np.float32).reshape(len(existing), backend.dim)
    DenseVector.objects.bulk_create([DenseVector(index=index, object_id=pk, vector=v) for pk, v in zip(new_pks, new_vectors)])
    all_pks = old_pks + new_pks
    edges = clustering.incremental_knn(old_vectors, new_vectors, k=k)

    membership_of = dict(CommunityMembership.objects.filter(precedent_id__in=old_pks).values_list("precedent_id", "community_id"))
    neighbours = defaultdict(list)
    ranks = defaultdict(int)
    sims = []
    for src, dst, score in edges:
        ranks[src] += 1
        sims.append(Similarity(source_id=all_pks[src], target_id=all_pks[dst], score=float(score), rank=ranks[src]))
        neighbours[src].append(dst)
    Similarity.objects.bulk_create(sims)
    memberships = []
    for row, pk in enumerate(new_pks, start=len(old_pks)):
        votes = [membership_of.get(all_pks[n]) for n in neighbours[row] if all_pks[n] in membership_of]
        if votes:
            community_id = clustering.assign_to_community(list(range(len(votes))), votes)
            memberships.append(CommunityMembership(community_id=community_id, precedent_id=pk, assigned="incremental"))
    CommunityMembership.objects.bulk_create(memberships)
    changed = {m.community_id for m in memberships}
    for community_id in changed:
        Community.objects.filter(pk=community_id).update(size=CommunityMembership.objects.filter(community_id=community_id).count())
    graph_sync("Case", new_pks)
    graph_sync("Community", changed)
    return len(new_pks)
