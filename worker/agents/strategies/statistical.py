"""The statistical strategy: every stage without an LLM, with transparent scores.

- focus: the sentences that concern the defendant (features.focus_facts);
- features: the lexicon extractor (features.extract_features);
- pre-judged charges: a trained multi-label text classifier (training/), if any;
- checklist items: with a trained verifier (worker/agents/verifier.py), an item is
  supported when its calibrated probability reaches the verifier's threshold, and the
  probability is the verdict's score and reasoning; without one, when enough of its
  content (character bigrams) occurs in one sentence of the facts. The best sentence is
  the span;
- retrieval: the trained intent classifier reranks the article path when one is active;
- article decision: score = 0.6·prior + 0.4·share of supported items, where the
  prior is the larger of the classifier probability of the article's charges
  (or of the article itself) and the retrieved precedents' score-weighted vote
  for those charges; passes at ≥ ARTICLE_PASS;
- adjudication: the verified articles' charges ranked by classifier
  probability and precedent support; the term from a trained term model, else
  the median of the verified precedents that share the charge.

The thresholds are fixed design values, not fitted to any evaluation set.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from worker.agents import reasons
from worker.agents.features import extract_features, focus_facts
from worker.agents.graph_types import ChecklistEntry, Term
from worker.agents.ports import GraphStore
from worker.agents.retrieval import IntentClassifier
from worker.agents.types import ArticleAudit, Audit, CaseInput, Evidence, ItemVerdict, Judgment, Research, Status
from worker.agents.verifier import SENTENCE, FactsView, grams, item_content

ITEM_SUPPORT = 0.5  # share of the item's content bigrams found in one sentence, or in the abstract features
ARTICLE_PASS = 0.35
CHARGE_KEEP = 0.5  # extra charges need this probability; the best one is always kept


class StatisticalStrategy:
    name = "statistical"

    def __init__(self, *, tokenize: Callable[[str], list[str]] | None = None, charge_model=None, article_model=None,
                 term_model=None, aliases: dict[str, str] | None = None, statute_charges: set[str] | None = None,
                 verifier=None, intent_model=None):
        self.tokenize = tokenize or (lambda text: list(text))
        # Dataset charge names (what the classifier predicts) → statute charge names (what articles define).
        self.aliases = aliases or {}
        # Names the statutes define: such a label stands only for itself (行贿罪 is not 对有影响力的人行贿罪).
        self.statute_charges = frozenset(statute_charges or ())
        self.charge_model = charge_model
        self.article_model = article_model
        self.term_model = term_model
        self.verifier = verifier
        self.intent_model = intent_model
        # The Researcher's article path reranks with this (None: the cue rules).
        self.intent_classifier = IntentClassifier(intent_model, self._tokens_uncached) if intent_model is not None else None
        self._facts_view: tuple[str, FactsView] | None = None
        self._tokens_cache: dict[str, list[str]] = {}
        self._probs_cache: dict[tuple[str, str], dict[str, float]] = {}

    def versions(self) -> dict[str, str]:
        def mid(m):
            return getattr(m, "model_id", "none") if m is not None else "none"

        return {"strategy": "statistical/1", "charge_model": mid(self.charge_model), "article_model": mid(self.article_model),
                "term_model": mid(self.term_model), "verifier": mid(self.verifier), "intent_model": mid(self.intent_model)}

    def usage(self) -> dict:
        return {}

    def _tokens(self, text: str) -> list[str]:
        if text not in self._tokens_cache:
            self._tokens_cache = {text: self.tokenize(text)}  # one text per run: keep only the last
        return self._tokens_cache[text]

    # -- stages ----------------------------------------------------------------
    def focus(self, case: CaseInput, defendant: str) -> str:
        return focus_facts(case.facts, defendant, case.defendants)

    def features(self, focus: str) -> tuple[dict[str, list[str]], str]:
        found = extract_features(focus)
        return found.as_dict(), found.text()

    def prejudge(self, focus: str, k: int) -> list[tuple[str, float]]:
        if self.charge_model is None:
            return []
        return [(c, round(float(p), 6)) for c, p in self.charge_model.top(self._tokens(focus), k=k, min_p=0.05)]

    def _tokens_uncached(self, text: str) -> list[str]:
        return self.tokenize(text)

    def verify_items(self, focus: str, article: ArticleAudit, items: list[ChecklistEntry]) -> list[ItemVerdict]:
        if self.verifier is not None:
            return self._verify_with_model(focus, items)
        sentences = [(m.start(), m.end(), m.group()) for m in SENTENCE.finditer(focus)] or [(0, len(focus), focus)]
        sentence_grams = [grams(s) for _, _, s in sentences]
        # The abstract features ("秘密窃取", "金额:千元至三万元", "以非法占有为目的") restate
        # the facts in the checklists' vocabulary; an item may be supported by them.
        labels = [label.split(":")[-1] for _, label in extract_features(focus).labels()]
        feature_grams = [(label, grams(label)) for label in labels]
        verdicts = []
        for item in items:
            wanted = grams(item_content(item.question))
            best, where = 0.0, None
            for (start, end, _), sg in zip(sentences, sentence_grams):
                share = len(wanted & sg) / len(wanted) if wanted else 0.0
                if share > best:
                    best, where = share, (start, end)
            by_feature = [label for label, fg in feature_grams if fg and len(wanted & fg) / len(fg) >= 0.99]
            feature_share = min(1.0, sum(len(wanted & grams(lbl)) for lbl in by_feature) / len(wanted)) if wanted else 0.0
            ok = best >= ITEM_SUPPORT or (by_feature and feature_share >= ITEM_SUPPORT / 2)
            if best >= ITEM_SUPPORT:
                reasoning = f"{best:.0%} of the item's terms occur in one sentence of the facts"
                why = reasons.why(reasons.ITEM_TERMS_IN_SENTENCE, share=round(best, 4))
            elif ok:
                reasoning = f"the facts show {'、'.join(by_feature)}"
                why = reasons.why(reasons.ITEM_FEATURE_MATCH, features=list(by_feature))
            else:
                reasoning = f"at most {best:.0%} of the item's terms occur in any sentence; no matching feature"
                why = reasons.why(reasons.ITEM_NOT_SHOWN, share=round(best, 4))
            span = where if ok and best >= ITEM_SUPPORT else None
            verdicts.append(ItemVerdict(
                item_pk=item.pk, order=item.order, question=item.question, satisfied=bool(ok),
                score=round(max(best, feature_share), 4), reasoning=reasoning, span=span,
                span_text=focus[span[0]:span[1]] if span else "", why=why,
            ))
        return verdicts

    def _verify_with_model(self, focus: str, items: list[ChecklistEntry]) -> list[ItemVerdict]:
        """The trained verifier's calibrated probability, thresholded; the best sentence is the span."""
        if self._facts_view is None or self._facts_view[0] != focus:
            self._facts_view = (focus, FactsView(focus))  # one text per run: keep only the last
        threshold = self.verifier.threshold
        verdicts = []
        for item, found in zip(items, self.verifier.assess(self._facts_view[1], [i.question for i in items])):
            p, span, share = found["p"], found["span"], found["features"]["best_share"]
            ok = p >= threshold
            reasoning = (f"verifier p = {p:.2f} {'≥' if ok else '<'} threshold {threshold:.2f}; "
                         f"the best sentence holds {share:.0%} of the item's terms")
            span = span if ok else None
            verdicts.append(ItemVerdict(item_pk=item.pk, order=item.order, question=item.question, satisfied=bool(ok),
                                        score=round(p, 4), reasoning=reasoning, span=span,
                                        span_text=focus[span[0]:span[1]] if span else "",
                                        why=reasons.why(reasons.ITEM_VERIFIER, p=round(p, 4), threshold=threshold,
                                                        share=round(share, 4), satisfied=bool(ok))))
        return verdicts

    def _probs(self, kind: str, model, focus: str, k: int) -> dict[str, float]:
        """label → probability of a classifier for the focused facts, computed once per text
        (the Auditor asks for every candidate article; the Adjudicator again)."""
        if model is None:
            return {}
        key = (kind, focus)
        if key not in self._probs_cache:
            self._probs_cache = {k_: v for k_, v in self._probs_cache.items() if k_[1] == focus}  # one text per run
            self._probs_cache[key] = {str(label): p for label, p in model.top(self._tokens(focus), k=k)}
        return self._probs_cache[key]

    def _charge_probs(self, focus: str) -> dict[str, float]:
        return self._probs("charges", self.charge_model, focus, 100)

    def _prob_of(self, probs: dict[str, float], charge: str) -> float:
        """The classifier's probability for a statute charge, through its dataset names."""
        return max((p for label, p in probs.items() if self._matches(label, charge)), default=0.0)

    def _matches(self, label: str, charge: str) -> bool:
        if label in self.statute_charges:
            return label == charge
        return names_match(label, charge, self.aliases)

    def _article_prob(self, focus: str, article: ArticleAudit) -> float:
        """The article classifier's probability of the article (trained on base numbers, CAIL labels)."""
        probs = self._probs("articles", self.article_model, focus, 50)
        return float(probs.get(str(article.key).split("-")[0], 0.0))

    def _prior(self, focus: str, article: ArticleAudit, prejudged: dict[str, float], support: dict[str, float]) -> float:
        prior = max((max(self._prob_of(prejudged, c), self._prob_of(support, c)) for c in article.charges), default=0.0)
        if self.charge_model is not None:
            probs = self._charge_probs(focus)
            prior = max([prior] + [self._prob_of(probs, c) for c in article.charges])
        return float(max(prior, self._article_prob(focus, article)))

    def decide_article(self, focus: str, article: ArticleAudit, prejudged: dict[str, float],
                       support: dict[str, float]) -> tuple[bool, float, str]:
        prior = self._prior(focus, article, prejudged, support)
        article.prior = round(prior, 6)
        supported = sum(1 for i in article.items if i.satisfied)
        share = supported / len(article.items) if article.items else 0.0
        score = 0.6 * prior + 0.4 * share
        passed = score >= ARTICLE_PASS
        reason = (f"score {score:.2f} = 0.6 × prior {prior:.2f} (classifier or precedents) + 0.4 × {supported}/{len(article.items)} checklist items "
                  f"supported; {'passes' if passed else 'below'} {ARTICLE_PASS}")
        article.why = reasons.why(reasons.ARTICLE_APPLIES if passed else reasons.ARTICLE_REJECTED, p=round(score, 4),
                                  threshold=ARTICLE_PASS, supported=supported, total=len(article.items),
                                  signals={"prior": round(prior, 4)})
        return passed, round(score, 6), reason

    def adjudicate(self, focus: str, audit: Audit, research: Research, evidence: list[Evidence], graph: GraphStore) -> Judgment:
        verified = audit.verified
        probs = self._charge_probs(focus)
        cases = [graph.case(pk) for pk in audit.verified_cases]
        cases = [c for c in cases if c is not None]
        scored, prob = {}, {}
        for a in verified:
            for charge in a.charges:
                support = (sum(1 for c in cases if any(self._matches(x, charge) for x in c.charges)) / len(cases)
                           if cases else 0.0)
                prob[charge] = self._prob_of(probs, charge) if probs else a.score
                scored[charge] = max(scored.get(charge, 0.0), 0.7 * prob[charge] + 0.3 * support)
        if not scored:
            return Judgment(status=Status.INSUFFICIENT_EVIDENCE, message="no verified article defines a charge")
        ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
        charges = [ranked[0][0]] + [c for c, _ in ranked[1:] if prob.get(c, 0.0) >= CHARGE_KEEP]
        # One article per charge: among the verified articles defining it, the one the article
        # classifier finds most likely for these facts, then the best audit score. (An article
        # merely listing the charge in a cross-reference gets its prior from the charge alone.)
        chosen = []
        for charge in charges:
            best = max((a for a in verified if charge in a.charges),
                       key=lambda a: (round(self._article_prob(focus, a), 2), a.score, -a.article_pk))
            if best not in chosen:
                chosen.append(best)
        term = self._term(focus, charges, cases)
        reasoning = _reasoning(chosen, charges, term, evidence)
        return Judgment(status=Status.JUDGED, charges=charges, article_keys=[a.key for a in chosen],
                        article_pks=[a.article_pk for a in chosen], term=term, reasoning=reasoning, evidence=evidence,
                        scores={c: round(s, 6) for c, s in ranked})

    def _term(self, focus: str, charges: list[str], cases) -> Term | None:
        if self.term_model is not None:
            t = self.term_model.predict(self._tokens(focus))
            if isinstance(t, dict):  # worker.agents.textmodel.TermModel
                t = Term(months=int(t["months"]), life=bool(t["life"]), death=bool(t["death"]))
            return t
        terms = [c.term for c in cases if c.term is not None and set(c.charges) & set(charges)]
        if not terms:
            return None
        if sum(t.death for t in terms) * 2 > len(terms):
            return Term(death=True)
        if sum(t.life for t in terms) * 2 > len(terms):
            return Term(life=True)
        return Term(months=int(round(statistics.median(t.months for t in terms if not (t.life or t.death)))))


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def names_match(label: str, charge: str, aliases: dict[str, str]) -> bool:
    """A dataset charge name stands for a statute charge: equal, aliased, or a character subsequence
    (贩卖毒品罪 → 走私、贩卖、运输、制造毒品罪), the evaluator's own rule."""
    return label == charge or aliases.get(label) == charge or _subsequence(label, charge)


def _reasoning(chosen: list[ArticleAudit], charges: list[str], term: Term | None, evidence: list[Evidence]) -> str:
    by_article = {}
    for e in evidence:
        by_article.setdefault((e.kind, e.ref), []).append(e.n)
    parts = []
    for a in chosen:
        cite = "".join(f"[{n}]" for n in by_article.get(("article", a.key), []))
        items = "".join(f"[{n}]" for n in by_article.get(("checklist", a.key), []))
        parts.append(f"依照{a.label}{cite}，经逐项审查{('，' + items + '所列要件有事实支持') if items else ''}")
    precedents = "".join(f"[{e.n}]" for e in evidence if e.kind == "precedent")
    text = "；".join(parts) + f"，被告人的行为构成{'、'.join(charges)}。"
    if term is not None:
        what = "死刑" if term.death else "无期徒刑" if term.life else f"有期徒刑或拘役{term.months}个月"
        text += f"参照类似案例{precedents}，" if precedents else ""
        text += f"建议刑期：{what}。"
    return text
