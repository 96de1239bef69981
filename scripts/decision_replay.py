"""Replay the statistical judge's charge decision on the bundles a stored evaluation run kept.

    DB_NAME=lextrace_bench python scripts/decision_replay.py RUN

For each defendant judgment of evaluation run RUN, the audited candidates of its bundle (their Auditor
probability, their supported checklist items, the charge classifier's probability) are decided again
under three rules, and the per-defendant charge accuracy of each is printed (the paper's matching
rule, apps/evaluation/metrics.py):

  threshold      an article passes at P >= the threshold with an element shown (build 6a08386);
  + fallback     when none does, the most probable candidate with an element shown (build 4d2555e);
  + agreement    a further charge also needs the charge classifier's probability >= 0.5 (a62386e).

With ``--recheck-elements`` every audited article's items are first checked again by the current element
check (worker/agents/stages/auditor/elements.py) on the defendant's focused facts, so that a change of the element check
can be measured on stored bundles before a full evaluation:

    DB_NAME=lextrace_bench python scripts/decision_replay.py RUN --recheck-elements

With ``--losses`` the judgments the last rule gets wrong are sorted by where they fail: a record of several
defendants with different charges (each scored against the record's whole set), the gold charge among no
candidate, the gold charge's best candidate with no element shown, an extra charge beside the gold one, or a
gold candidate with an element shown but ranked below another.

A replay, not the pipeline: each article's first charge stands for it and the concurrence rule is left
out, so its figures are a little below the pipeline's own; it shows what each rule changes on the same
audited candidates. Use it on the development split's runs, never to choose on an evaluation set.
"""

import copy
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

import django  # noqa: E402

django.setup()

from apps.evaluation.metrics import _charge_set, map_predicted  # noqa: E402
from apps.evaluation.models import EvaluationRun  # noqa: E402
from worker.agents.types import ArticleAudit, Bundle  # noqa: E402

THRESHOLD, MULTI, AGREE = 0.3, 0.55, 0.5


def _charged(bundle: Bundle) -> list[ArticleAudit]:
    """The audited articles that define a charge."""
    return [a for a in (bundle.audit.articles if bundle.audit else []) if a.charges]


def decide(bundle: Bundle, *, fallback: bool, agree: float) -> list[str] | None:
    shown = [a for a in _charged(bundle) if any(i.satisfied for i in a.items)]
    passing = sorted((a for a in shown if a.score >= THRESHOLD), key=lambda a: -a.score)
    if not passing and fallback:
        passing = sorted(shown, key=lambda a: -a.score)[:1]
    if not passing:
        return None
    chosen = passing[:1] + [a for a in passing[1:] if a.score >= MULTI and a.signals.get("chg_p", 0.0) >= agree]
    return list(dict.fromkeys(a.charges[0] for a in chosen))


def recheck(bundle: Bundle, facts: str) -> Bundle:
    """The bundle with each item's support decided again by the current element check."""
    from apps.judging.services import element_checker
    from worker.agents.stages.focus import focus_facts

    focus = focus_facts(facts, bundle.defendant, list(bundle.case.defendants))
    bundle = copy.deepcopy(bundle)
    for article in bundle.audit.articles if bundle.audit else []:
        items = article.items
        for item, support in zip(items, element_checker().check(focus, [i.question for i in items])):
            item.satisfied = support.satisfied
    return bundle


def loss(bundle: Bundle, gold: list[str], charges: list[str] | None) -> str:
    """Where a wrong judgment of the last rule fails (see ``--losses``)."""
    if len(gold) > 1:
        return "several gold charges"
    own = [a for a in _charged(bundle) if any(map_predicted([c], gold) <= _charge_set(gold) for c in a.charges)]
    if not own:
        return "gold charge among no candidate"
    if not any(i.satisfied for i in max(own, key=lambda a: a.score).items):
        return "gold candidate, no element shown"
    if charges and len(charges) > 1 and map_predicted(charges, gold) >= _charge_set(gold):
        return "an extra charge"
    return "gold candidate with an element, ranked below another"


def main(run_id: int, *, recheck_elements: bool = False, losses: bool = False) -> None:
    run = EvaluationRun.objects.get(pk=run_id)
    rules = {"threshold": dict(fallback=False, agree=0.0), "+ fallback": dict(fallback=True, agree=0.0),
             "+ agreement": dict(fallback=True, agree=AGREE)}
    right = dict.fromkeys(rules, 0)
    undecided = dict.fromkeys(rules, 0)
    where = Counter()
    n = 0
    for case in run.cases.all():
        gold = list(case.gold["charges"])
        for stored in case.bundles or []:
            bundle = Bundle.from_dict(stored)  # old stored bundles too (schema 1's defendants as a repr)
            n += 1
            if recheck_elements:
                bundle = recheck(bundle, case.fact)
            for name, rule in rules.items():
                charges = decide(bundle, **rule)
                ok = charges is not None and map_predicted(charges, gold) == _charge_set(gold)
                if charges is None:
                    undecided[name] += 1
                else:
                    right[name] += ok
            if losses and not ok:
                where[loss(bundle, gold, charges)] += 1
    how = ", items re-checked by the current element check" if recheck_elements else ""
    print(f"evaluation run {run.pk} ({run.label}): {n} defendant judgments{how}")
    for name in rules:
        print(f"  {name:12s} charge accuracy {100 * right[name] / max(n, 1):.1f}  no article passed {undecided[name]}")
    if losses:
        print(f"  wrong under {name}, by where they fail:")
        for what, count in where.most_common():
            print(f"    {count:4d}  {what}")


if __name__ == "__main__":
    main(int(sys.argv[1]), recheck_elements="--recheck-elements" in sys.argv[2:], losses="--losses" in sys.argv[2:])
