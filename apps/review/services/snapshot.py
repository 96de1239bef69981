"""The snapshot an approval binds to (INV-4), and the comparison that invalidates it.

The snapshot is recomputed from the database every time, never read from a
cache: the run as requested (facts hash, case version, offence date,
defendants, strategy, ablation, versions), each defendant's stored result
(status, charges, articles, term, and the hash of its complete evidence
bundle, which holds parameters, retrieval scores, verdicts, the judgment and
the LLM exchanges), the current text of every statute version,
interpretation and precedent the bundles refer to, and the reviewer's
overrides and what-if outputs of the review version. A change through the
ORM, raw SQL or a corpus edit changes one of these parts and so the hash.
"""

from __future__ import annotations

import hashlib

from lexlib.canonical import canonical_json, normalize
from worker.agents.jsonhash import sha256_text
from worker.agents.types import Bundle


def snapshot_hash(snapshot: dict) -> str:
    return hashlib.sha256(canonical_json(normalize(snapshot))).hexdigest()


def _refs(bundles: list[dict]) -> tuple[set[int], set[int], set[int]]:
    """The statute versions, interpretations and precedents the stored bundles refer to."""
    versions, interpretations, precedents = set(), set(), set()
    for stored in bundles:
        bundle = Bundle.from_dict(stored)
        if bundle.audit:
            for a in bundle.audit.articles:
                if a.version_pk:
                    versions.add(int(a.version_pk))
                interpretations.update(int(pk) for pk in a.interpretations)
            precedents.update(int(pk) for pk in bundle.audit.verified_cases)
        for e in bundle.judgment.evidence if bundle.judgment else []:
            if e.kind == "interpretation":
                interpretations.add(int(e.pk))
            elif e.kind == "precedent":
                precedents.add(int(e.pk))
    return versions, interpretations, precedents


def snapshot_build(review, *, version: int | None = None) -> dict:
    from apps.corpus.models import ArticleVersion, Interpretation, Precedent
    from apps.review.models import ReviewItem, WhatIf

    version = review.version if version is None else version
    run = review.run
    results = list(run.results.order_by("position"))
    whatifs = {w.result_id: w for w in WhatIf.objects.filter(review=review, version=version)}
    bundles = [r.bundle or {} for r in results] + [w.bundle for w in whatifs.values() if w.bundle]
    version_pks, interp_pks, precedent_pks = _refs(bundles)
    return {
        "run": {
            "id": run.pk, "case": run.case_id, "case_version": run.case_version, "facts_sha256": sha256_text(run.facts),
            "offence_date": run.offence_date.isoformat(), "defendants": list(run.defendants),
            "strategy": run.strategy, "ablation": run.ablation, "versions": run.versions or {},
        },
        "results": [{
            "position": r.position, "defendant": r.defendant, "status": r.status, "charges": list(r.charges),
            "article_keys": list(r.article_keys), "term_months": r.term_months, "life": r.life, "death": r.death,
            "bundle_sha256": snapshot_hash(r.bundle or {}),
            "whatif_sha256": snapshot_hash(whatifs[r.pk].bundle) if r.pk in whatifs and whatifs[r.pk].bundle else "",
        } for r in results],
        "statutes": [{"version": v.pk, "article": v.article_id, "text_sha256": sha256_text(v.text),
                      "valid_from": v.valid_from.isoformat() if v.valid_from else None,
                      "valid_to": v.valid_to.isoformat() if v.valid_to else None, "repealed": v.repealed}
                     for v in ArticleVersion.objects.filter(pk__in=version_pks).order_by("pk")],
        "interpretations": [{"id": i.pk, "text_sha256": sha256_text(i.text)}
                            for i in Interpretation.objects.filter(pk__in=interp_pks).order_by("pk")],
        "precedents": [{"id": p.pk, "fact_sha256": sha256_text(p.fact)}
                       for p in Precedent.objects.filter(pk__in=precedent_pks).order_by("pk")],
        "review": {"id": review.pk, "version": version, "overrides": [
            {"result": i.result_id, "target": i.target, "ref": i.ref, "action": i.action, "value": i.value,
             "reason": i.reason}
            for i in ReviewItem.objects.filter(review=review, version=version).order_by("result_id", "target", "ref")]},
    }


def snapshot_changes(approved: dict, current: dict) -> list[str]:
    """Which parts of the snapshot differ, in words a reviewer understands."""
    changes = []
    if approved.get("run") != current.get("run"):
        changes.append("the run's facts, parameters or versions")
    old_results = {r["position"]: r for r in approved.get("results") or []}
    for r in current.get("results") or []:
        before = old_results.pop(r["position"], None)
        if before != r:
            changes.append(f"the result of defendant {r['position'] + 1}")
    changes += [f"the result of defendant {p + 1} (removed)" for p in old_results]
    for part, words in (("statutes", "the text of a statute version"), ("interpretations", "an interpretation"),
                        ("precedents", "a precedent"), ("review", "the reviewer's overrides")):
        if approved.get(part) != current.get(part):
            changes.append(words)
    return changes or ["the snapshot"]
