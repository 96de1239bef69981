"""The statistical strategy: every stage without an LLM, with transparent evidence.

- focus: the sentences that concern the defendant (focus.focus_facts);
- features: the lexicon extractor (features.extract_features);
- pre-judged charges: the long-tail charge classifier's ``prejudge_k`` best labels (training/longtail.py);
  the Researcher's charge path anchors on them;
- checklist items: the element check (worker/agents/stages/auditor/elements.py) decides whether the facts show an
  item and quotes the passage; the trained item verifier's probability, when one is active, is the
  verdict's score;
- article decision: the learned Auditor (worker/agents/models/auditor.py) weighs the label-agnostic
  signals of every candidate (worker/agents/stages/auditor/signals.py: the classifiers, the legal texts, the Fact
  graph, each retrieval path, the checklist verdicts) into P(the article applies); an article passes
  when P reaches the Auditor's threshold *and* at least one of its items is supported; when none does, the
  most probable candidate with a shown element that defines a charge stands, and its reason says it was
  below the threshold. An article with no element shown never passes, whatever its other evidence;
- adjudication: the charge of the most probable verified article, and of every further verified article
  whose P reaches the multi-charge threshold and whose charge the classifier finds more likely than not, or
  whose charge is the most likely one of a separate part of the facts ("另查明…", "二、…": focus.separate_parts;
  the judgment's ``why`` quotes the part), except where one of the two articles punishes conduct that
  also constitutes another offence under the heavier provision (then the heavier one alone, as 133之一
  beside 133 says); per charge its defining article, plus the verified articles
  that define no charge but go with it in the precedents (a punishment article such as 383 for 382) or by
  their text (a unit-crime provision such as 150 covering 140, when the facts show a unit crime: it is decided
  by that rule, stages/auditor/provisions.py); the term from the term model pulled towards the median term of
  the verified precedents of the chosen charges, within the verified articles' statutory range.

Without a trained Auditor (a fresh installation) the decision falls back to the classifiers' probability
with the same element requirement, and says so in every reason.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from worker.agents import reasons
from worker.agents.charge_names import is_subsequence, statute_charges_of
from worker.agents.graph_types import ChecklistEntry, Term
from worker.agents.models.sentencing import sentencing_features, statutory_range, term_basis, term_inputs
from worker.agents.models.textmodel import sigmoid
from worker.agents.models.verifier import FactsView
from worker.agents.ports import GraphStore
from worker.agents.stages.auditor import provisions
from worker.agents.stages.auditor.amounts import lowest_standards, yuan_text
from worker.agents.stages.auditor.elements import (ElementChecker, amount_item, circumstance_item, generic_item,
                                                   past_offences)
from worker.agents.stages.auditor.signals import Ranking, article_signals, cosine, path_votes
from worker.agents.stages.features import extract_features
from worker.agents.stages.focus import focus_facts, separate_parts
from worker.agents.stages.researcher.retrieval import IntentClassifier
from worker.agents.strategies.base import Strategy
from worker.agents.types import ArticleAudit, Audit, CaseInput, Evidence, ItemVerdict, Judgment, Research, Status
from worker.agents.wording import term_wording

PREJUDGE_K = 10  # charges the Researcher anchors on (chosen on the development split, docs/RESULTS.md)
FALLBACK_THRESHOLD = 0.35  # without a trained Auditor: the strongest single evidence an article needs
FALLBACK_MULTI = 0.5  # a further charge: the charge classifier's own probability, with or without an Auditor
# A further charge by a separate part of the facts: the part's most likely charge at this probability (development
# split, evaluation runs 49 and 50: at 0.5 charges 455 → 459 exact, articles 444 → 442; at 0.7 459 and 444)
PART_CHARGE_P = 0.7
# When nothing passes, the best candidate with a shown element would stand. With the logistic Auditor this added
# 3 points on the development split; with the boosted one (threshold 0.1) it answers only candidates below
# P = 0.1, and 1 of its 27 answers there was right (docs/RESULTS.md): an explicit insufficient_evidence instead.
BEST_SUPPORTED_FALLBACK = False
FOCUS_VIEWS = 8  # focused texts whose tokens and model rankings a strategy keeps (see _focus_view)
# The precedents' median term's weight beside the term model's (log months), chosen on the development split
# (term MAE, evaluation runs 87-90 of docs/RESULTS.md): the model alone 15.90 months, 0.3 15.54, 0.4 15.53, 0.5 15.58
PRECEDENT_TERM_SHARE = 0.4
SEVERE_SHOWN = 0.05  # the term basis names the chance of life or death that raised a fixed term from this chance up
COMPANION_SHARE = 0.5  # a verified article defining no charge goes with a charge cited by this share of its precedents


def shows_conduct(item: ItemVerdict) -> bool:
    """Whether a shown item is an element of the offence's own conduct, not one every offence of its kind shares: an
    amount reaching a standard or an item asking only for an amount tier (``elements.amount_item``), or the intent
    or the victim (``elements.generic_item``); nor what the offender did after it (``elements.circumstance_item``:
    a surrender, a repayment). An article passes only with one such element shown: a fraud's sum and intent do not
    make it a theft, nor its repayment a criminal damage."""
    return (item.satisfied and item.why.get("code") != reasons.ITEM_AMOUNT_REACHED and not amount_item(item.question)
            and not generic_item(item.question) and not circumstance_item(item.question))


def _conduct_within(article: ArticleAudit, part: tuple[int, int]) -> bool:
    """Whether an element of the article's own conduct (``shows_conduct``) is shown inside ``part`` of the facts."""
    return any(shows_conduct(i) and i.span and part[0] <= i.span[0] < part[1] for i in article.items)


class StatisticalStrategy(Strategy):
    name = "statistical"
    prejudge_k = PREJUDGE_K
    # The Researcher's paths of its full pipeline: on the development split, with the boosted Auditor, leaving out
    # R_sem, R_com or R_art each lost no charge accuracy (62.0 full; 63.0, 62.0, 62.3 without), R_chg carries the
    # judge (docs/RESULTS.md): with a charge classifier, the statistical judge runs R_chg alone. Without one (a
    # fresh installation) R_chg has no charge to anchor on, and every default path runs. The LLM strategy runs
    # every default path.
    TRAINED_PATHS = ("chg",)

    def __init__(self, *, tokenize: Callable[[str], list[str]] | None = None, charge_model=None, article_model=None,
                 term_model=None, aliases: dict[str, str] | None = None, statute_charges: set[str] | None = None,
                 verifier=None, intent_model=None, auditor=None, elements: ElementChecker | None = None,
                 best_supported_fallback: bool = BEST_SUPPORTED_FALLBACK):
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
        self.auditor = auditor
        self.elements = elements or ElementChecker(tokenize=self.tokenize, item_df={}, n_items=1)
        self.best_supported_fallback = best_supported_fallback
        self.paths = self.TRAINED_PATHS if charge_model is not None else None
        # The Researcher's article path reranks with this (None: the cue rules).
        self.intent_classifier = IntentClassifier(intent_model, self.tokenize) if intent_model is not None else None
        # The views of the FOCUS_VIEWS most recently used focused texts: a strategy shared by the
        # what-ifs of a web process sees several defendants in turn, each of them again and again.
        self._views: OrderedDict[str, dict] = OrderedDict()
        self._versions: dict[str, str] | None = None
        self._legal_vectors: dict[tuple[int, int | None], dict[int, float]] = {}
        self._labels_of_charge: dict[str, list[str]] = {}
        self._statute_charges_of: dict[str, list[str]] = {}

    def versions(self) -> dict[str, str]:
        # A model's id hashes its weights (a few hundred ms for the classifiers): computed once, as the
        # strategy's models do not change after it is built.
        if self._versions is None:
            self._versions = self._model_versions()
        return dict(self._versions)

    def _model_versions(self) -> dict[str, str]:
        def mid(m):
            return getattr(m, "model_id", "none") if m is not None else "none"

        return {"strategy": "statistical/2", "charge_model": mid(self.charge_model), "article_model": mid(self.article_model),
                "term_model": mid(self.term_model), "verifier": mid(self.verifier), "intent_model": mid(self.intent_model),
                "auditor": mid(self.auditor)}

    def usage(self) -> dict:
        return {}

    # -- what every stage needs of one focused text, computed once ----------------------
    def _focus_view(self, focus: str) -> dict:
        # Safe to call from several threads: a view is built from the text alone, so two threads that
        # build the same one build equal ones, and each returns the view it looked up or built.
        view = self._views.get(focus)
        if view is not None:
            try:
                self._views.move_to_end(focus)  # the least recently used one goes first
            except KeyError:  # dropped by another thread meanwhile: this thread still has it
                pass
        else:
            tokens = self.tokenize(focus)
            view = {"tokens": tokens, "charges": _ranking(self.charge_model, tokens),
                    "articles": _ranking(self.article_model, tokens),
                    "vector": _vector(self.charge_model, tokens), "facts": None, "parts": None}
            self._views[focus] = view
            while len(self._views) > FOCUS_VIEWS:
                try:
                    self._views.popitem(last=False)
                except KeyError:  # emptied by another thread meanwhile
                    break
        return view

    # -- stages ------------------------------------------------------------------------
    def focus(self, case: CaseInput, defendant: str) -> str:
        return focus_facts(case.facts, defendant, case.defendants)

    def features(self, focus: str) -> tuple[dict[str, list[str]], str]:
        found = extract_features(focus)
        return found.as_dict(), found.text()

    def prejudge(self, focus: str, k: int) -> list[tuple[str, float]]:
        ranking = self._focus_view(focus)["charges"]
        order = sorted(ranking.z, key=lambda label: (-ranking.z[label], label))[:k]
        return [(label, round(ranking.p[label], 6)) for label in order]

    def verify_checklists(self, focus: str, pairs: list[tuple[ArticleAudit, list[ChecklistEntry]]]) -> None:
        """Every item of every candidate article in one pass: the facts' sentences are split once and
        the verifier scores all items in one call (each item's verdict is its own, as one by one)."""
        items = [i for _, article_items in pairs for i in article_items]
        probabilities = iter(self._verifier_p(focus, items))
        for article, article_items in pairs:
            found = self.elements.check(focus, [i.question for i in article_items], article_pk=article.article_pk)
            article.items = [self._verdict(focus, item, support, next(probabilities))
                             for item, support in zip(article_items, found)]

    def verify_items(self, focus: str, article: ArticleAudit | None, items: list[ChecklistEntry]) -> list[ItemVerdict]:
        found = self.elements.check(focus, [i.question for i in items],
                                    article_pk=article.article_pk if article is not None else None)
        return [self._verdict(focus, item, support, p) for item, support, p in zip(items, found, self._verifier_p(focus, items))]

    def _verifier_p(self, focus: str, items: list[ChecklistEntry]) -> list[float | None]:
        """The trained item verifier's probability of each item (None without a verifier)."""
        if self.verifier is None or not items:
            return [None] * len(items)
        view = self._focus_view(focus)
        if view["facts"] is None:
            view["facts"] = FactsView(focus)
        return [f["p"] for f in self.verifier.assess(view["facts"], [i.question for i in items])]

    @staticmethod
    def _verdict(focus: str, item: ChecklistEntry, support, p: float | None) -> ItemVerdict:
        span = support.span if support.satisfied else None
        quote = focus[span[0]:span[1]] if span else ""
        standard = support.standard
        if support.rule == "terms":
            reasoning = f"{support.share:.0%} of the item's terms occur in one sentence of the facts"
            why = reasons.why(reasons.ITEM_TERMS_IN_SENTENCE, share=support.share)
        elif support.rule == "concepts":
            reasoning = f"the facts show {'、'.join(support.shown)}"
            why = reasons.why(reasons.ITEM_FEATURE_MATCH, features=list(support.shown))
        elif support.rule == "amount":
            reasoning = (f"the facts state {yuan_text(support.amount)} ≥ {yuan_text(standard.yuan)}, the lowest standard "
                         f"of {standard.tier} the interpretations set")
            why = reasons.why(reasons.ITEM_AMOUNT_REACHED, amount=yuan_text(support.amount), tier=standard.tier,
                              standard=yuan_text(standard.yuan), source=standard.source)
        elif support.rule == "quantity" and not support.shown:
            reasoning = f"not shown: the facts state no quantity of {'、'.join(support.quantity.substances)}"
            why = reasons.why(reasons.ITEM_QUANTITY_NOT_STATED, substances="、".join(support.quantity.substances),
                              range=support.quantity.text)
        elif support.rule == "quantity":
            inside = "within" if support.satisfied else "outside"
            reasoning = f"the facts state {support.shown[0]}, {inside} the {support.quantity.text} the item names"
            why = reasons.why(reasons.ITEM_QUANTITY_WITHIN if support.satisfied else reasons.ITEM_QUANTITY_OUTSIDE,
                              quantity=support.shown[0], range=support.quantity.text)
        elif support.rule == "past":
            reasoning = f"the facts recite an earlier conviction: {support.shown[0]}"
            why = reasons.why(reasons.ITEM_PAST_CONVICTION)
        elif support.rule == "past_named":
            reasoning = f"the facts name the defendant's earlier conviction by its legal name: {support.shown[0]}"
            why = reasons.why(reasons.ITEM_REPEAT_NAMED, name=support.shown[0])
        elif support.rule == "not_an_element":
            reasoning = "about the sentence or the classification, not an element the facts can show"
            why = reasons.why(reasons.ITEM_NOT_AN_ELEMENT)
        elif support.rule == "anchor":
            reasoning = f"the facts name {support.shown[0]}"
            why = reasons.why(reasons.ITEM_ANCHOR, word=support.shown[0])
        elif standard is not None:
            reasoning = (f"not shown: the largest amount the facts state, {yuan_text(support.amount)}, is below "
                         f"{yuan_text(standard.yuan)}, the lowest standard of {standard.tier}")
            why = reasons.why(reasons.ITEM_AMOUNT_BELOW, amount=yuan_text(support.amount), tier=standard.tier,
                              standard=yuan_text(standard.yuan), source=standard.source)
        else:
            reasoning = f"not shown: at most {support.share:.0%} of the item's terms occur in any sentence"
            why = reasons.why(reasons.ITEM_NOT_SHOWN, share=support.share)
        if p is not None:
            why["verifier_p"] = round(float(p), 4)
        return ItemVerdict(item_pk=item.pk, order=item.order, question=item.question, satisfied=support.satisfied,
                           score=round(float(p if p is not None else support.share), 4), reasoning=reasoning, span=span,
                           span_text=quote, why=why)

    def decide_articles(self, focus: str, articles: list[ArticleAudit], research: Research, graph: GraphStore,
                        on_decided) -> None:
        rows = self.signals(focus, articles, research, graph)
        if self.auditor is not None:
            probabilities = self.auditor.probabilities(rows)
            threshold = self.auditor.threshold
        else:  # the strongest single piece of evidence: a classifier, or the precedents of any path
            cited = {c.pk: c.article_pks for c in graph.cases(h.pk for h in research.hits if h.kind == "case")}
            votes = path_votes(research, lambda pk: cited.get(int(pk), ()))
            probabilities = np.array([max(r["chg_p"], r["art_p"], r["fact_share"],
                                          max((v.get(a.article_pk, 0.0) for v in votes.values()), default=0.0))
                                      for a, r in zip(articles, rows)])
            threshold = FALLBACK_THRESHOLD
        decided = []
        for a, row, p in zip(articles, rows, probabilities):
            supported = sum(1 for i in a.items if i.satisfied)
            conduct = sum(1 for i in a.items if shows_conduct(i))
            a.signals = row
            a.contributions = self.auditor.contributions(row) if self.auditor is not None else {}
            a.prior = round(row["chg_p"], 6)
            a.score = round(float(p), 6)
            a.passed = bool(conduct) and float(p) >= threshold
            decided.append((a, supported, conduct))
        separate = self._separate_acts(focus, decided)
        # No article defining a charge reaches the threshold: the best-supported one that defines a charge stands,
        # said as such (chosen on the development split: docs/RESULTS.md); an article with no element shown never
        # does. A passed provision defining none (390, the punishment of 行贿罪) gives no judgment alone.
        best = None
        if self.best_supported_fallback and not any(a.passed and a.charges for a, _, _ in decided):
            best = max((a for a, _, conduct in decided if conduct and a.charges and a.in_force),
                       key=lambda a: (a.score, -a.article_pk), default=None)
            if best is not None:
                best.passed = True
        counted = [(a, supported) for a, supported, _ in decided]
        units, definitions = _unit_decisions(counted), _definition_decisions(counted)
        repeats = _repeat_decisions(counted)
        punishments = _punishment_decisions(counted)
        by_label = {a.label: a for a, _, _ in decided}
        for a, supported, conduct in decided:
            p = a.score
            carried = sorted(a.contributions.items(), key=lambda kv: -abs(kv[1]))[:3]
            values = dict(p=round(float(p), 4), threshold=threshold, supported=supported, total=len(a.items),
                          signals={k: v for k, v in carried}, learned=self.auditor is not None)
            if a.article_pk in units:
                shown, covered = units[a.article_pk]
                a.passed = bool(shown and covered)
                a.reason = ("a unit-crime provision: " + ("the facts do not show a unit crime" if not shown else
                            "no article in its scope applies" if not covered else
                            f"the facts show a unit crime ({shown.span_text}) and it covers {'、'.join(covered)}, which applies"))
                a.why = reasons.why(reasons.ARTICLE_UNIT, applies=a.passed, shown=bool(shown),
                                    quote=shown.span_text if shown else "", covered="、".join(covered))
            elif a.article_pk in definitions:
                term, shown, covered = definitions[a.article_pk]
                a.passed = bool(shown and covered)
                a.reason = (f"a definition of {term}: " + (
                    "no article that applies uses the term" if not covered else
                    "the facts show nothing it defines" if not shown else
                    f"the facts show what it defines ({shown.span_text}) and {'、'.join(covered)}, which applies, "
                    "uses it"))
                a.why = reasons.why(reasons.ARTICLE_DEFINITION, applies=a.passed, shown=bool(shown), term=term,
                                    quote=shown.span_text if shown else "", covered="、".join(covered))
            elif a.article_pk in repeats:
                past, covered = repeats[a.article_pk]
                a.passed = bool(past and covered)
                a.reason = ("a provision for repeat offenders: " + (
                    "the facts recite no earlier conviction of an offence it names" if not past else
                    "no article of the offences it aggravates applies" if not covered else
                    f"the facts recite an earlier conviction ({past.span_text}) and {'、'.join(covered)} applies"))
                a.why = reasons.why(reasons.ARTICLE_REPEAT, applies=a.passed, shown=bool(past),
                                    quote=past.span_text if past else "", covered="、".join(covered))
            elif a.article_pk in punishments:
                charge, covered, by = punishments[a.article_pk]
                a.passed = bool(covered or by)
                if covered:
                    _offence_item_shown(a, charge, by_label[covered[0]])
                a.reason = (f"a punishment provision: {'、'.join(by)}, which applies, punishes by it" if by else
                            f"a punishment provision of {charge}: {'、'.join(covered)}, which defines it, applies"
                            if covered else f"a punishment provision of {charge}: no article defining it applies")
                a.why = reasons.why(reasons.ARTICLE_PUNISHMENT, applies=a.passed, charge=charge,
                                    covered="、".join(covered), by="、".join(by))
            elif not supported:
                a.reason = f"no checklist item is shown by the facts ({len(a.items)} checked); P = {p:.2f} is not enough alone"
                a.why = reasons.why(reasons.ARTICLE_NO_ELEMENT, **values)
            elif not conduct:
                a.reason = (f"only items every offence of its kind shares are shown ({supported}/{len(a.items)}: "
                            "an amount, the intent, the victim, or what followed the offence); "
                            "no element of its own conduct; "
                            f"P = {p:.2f} is not enough alone")
                a.why = reasons.why(reasons.ARTICLE_NO_CONDUCT, **values)
            elif a.article_pk in separate:
                label, part_p, part = separate[a.article_pk]
                a.reason = (f"below the threshold (P = {p:.2f} < {threshold:.2f}), but a separate part of the facts is "
                            f"most likely {label} (p = {part_p:.2f}) and shows an element of its conduct: "
                            "a further act")
                a.why = reasons.why(reasons.ARTICLE_SEPARATE_ACT, **values, label=label, part_p=round(part_p, 4),
                                    quote=part[:40])
            elif a is best:
                a.reason = (f"below the threshold (P = {p:.2f} < {threshold:.2f}) but the most probable candidate with a shown "
                            f"element ({supported}/{len(a.items)} checklist items supported); no candidate reached it")
                a.why = reasons.why(reasons.ARTICLE_BEST_SUPPORTED, **values)
            else:
                source = "the Auditor's" if self.auditor is not None else "the strongest single evidence's (no trained Auditor)"
                a.reason = (f"{source} P = {p:.2f} {'≥' if a.passed else '<'} {threshold:.2f}; {supported}/{len(a.items)} "
                            f"checklist items supported" + (f"; carried by {', '.join(k for k, _ in carried)}" if carried else ""))
                a.why = reasons.why(reasons.ARTICLE_APPLIES if a.passed else reasons.ARTICLE_REJECTED, **values)
            on_decided(a)

    def _separate_acts(self, focus: str, decided) -> dict[int, tuple[str, float, str]]:
        """Articles the Auditor rejected that pass as a further act: another article defining a charge passed, a
        separate part of the facts ("另查明…", "二、…") is by the charge classifier most likely a charge of the
        rejected one (``_part_labels``), and that part shows an element of its own conduct and none of the passed
        ones' (a separate act, not the same one told again). The Auditor's rows never saw a second offence told
        apart (its rank-two candidates are mostly wrong), so a burglary beside a drunk drive was rejected. Marks
        the articles passed; article pk → (label, the part's p, the part)."""
        passed = [a for a, _, _ in decided if a.passed and a.charges]
        if not passed:
            return {}
        charged = {c for a in passed for c in a.charges}
        parts = self._part_labels(focus)
        found: dict[int, tuple[str, float, str]] = {}
        for a, _, conduct in decided:
            if a.passed or not conduct or not a.charges or not a.in_force or charged & set(a.charges):
                continue
            hit = next(((label, *parts[label]) for c in a.charges for label in self._labels_for(c) if label in parts),
                       None)
            start = focus.find(hit[2]) if hit else -1
            part = (start, start + len(hit[2])) if hit else (-1, -1)
            # separate: the part shows this offence's conduct and none of the offences already charged (an
            # organisation's list of its members' beatings is the organisation's conduct, not a further act)
            if start < 0 or not _conduct_within(a, part) or any(_conduct_within(b, part) for b in passed):
                continue
            a.passed = True
            found[a.article_pk] = hit
        return found

    def signals(self, focus: str, articles: Sequence[ArticleAudit], research: Research, graph: GraphStore) -> list[dict]:
        """The Auditor's evidence for each candidate (stages/auditor/signals.py): also what training exports."""
        view = self._focus_view(focus)
        rule_sims = {a.article_pk: cosine(view["vector"], self._legal_vector(a, graph)) for a in articles}
        prejudged = [label for label, _ in research.prejudged]

        def labels_of(a: ArticleAudit) -> list[str]:
            labels = [label for charge in a.charges for label in self._labels_for(charge)]
            if not labels:  # an article defining no charge: the pre-judged charges whose precedents cite it
                labels = [label for label in prejudged if research.fact_shares.get(label, {}).get(a.article_pk, 0.0) > 0.1]
            return labels

        cited = {c.pk: c.article_pks for c in graph.cases(h.pk for h in research.hits if h.kind == "case")}

        def articles_of(case_pk: int) -> tuple[int, ...]:
            return cited.get(int(case_pk), ())

        counts = (self.charge_model.metadata.get("label_counts") or {}) if self.charge_model is not None else {}
        return article_signals(articles, research, charges=view["charges"], articles_rank=view["articles"],
                               labels_of=labels_of, rule_sims=rule_sims, label_counts=counts,
                               votes=path_votes(research, articles_of))

    def _legal_vector(self, a: ArticleAudit, graph: GraphStore) -> dict[int, float]:
        """The article's legal text (label, text, checklist items, linked interpretations) in the charge
        model's TF-IDF space, as training.longtail.legal_texts builds it."""
        key = (a.article_pk, a.version_pk)
        if key not in self._legal_vectors:
            interpretations = [i.text for i in graph.interpretations(a.article_pk)]
            text = "\n".join(p for p in [a.label, a.text, *[i.question for i in a.items], *interpretations] if p)
            self._legal_vectors[key] = _vector(self.charge_model, self.tokenize(text))
        return self._legal_vectors[key]

    def _labels_for(self, charge: str) -> list[str]:
        """The charge model's labels that stand for a statute charge."""
        if charge not in self._labels_of_charge:
            labels = self.charge_model.labels if self.charge_model is not None else []
            self._labels_of_charge[charge] = [str(label) for label in labels if self._matches(str(label), charge)]
        return self._labels_of_charge[charge]

    def statute_charges_of(self, label: str) -> list[str]:
        """The statute charges a classifier label stands for (R_chg reads the articles defining them when the
        label is a former or a dataset name no article defines: 掩饰、隐瞒犯罪所得罪 → 第三百一十二条)."""
        if label not in self._statute_charges_of:  # R_chg asks twice per label (its prefetch, then its articles)
            self._statute_charges_of[label] = statute_charges_of(label, self.statute_charges, self.aliases)
        return list(self._statute_charges_of[label])

    def _matches(self, label: str, charge: str) -> bool:
        if label in self.statute_charges:
            return label == charge
        return names_match(label, charge, self.aliases)

    def adjudicate(self, focus: str, audit: Audit, research: Research, evidence: list[Evidence], graph: GraphStore) -> Judgment:
        view = self._focus_view(focus)
        verified = sorted(audit.verified, key=lambda a: (-a.score, a.article_pk))
        careless = _careless_instead(audit.articles, verified)  # an act the facts show was careless is not intended
        defining = [a for a in verified if a.charges and a.article_pk not in careless]
        if not defining:
            return Judgment(status=Status.INSUFFICIENT_EVIDENCE, message="no verified article defines a charge",
                            why=[reasons.why(reasons.JUDGMENT_NO_CHARGE)])
        # A further charge must be more likely than not by the charge classifier too (and, with an Auditor, by
        # the Auditor's further-charge threshold): on the development split the Auditor alone added a charge
        # where the record had one about as often as the classifier's top charge was right (docs/RESULTS.md).
        further = [a for a in defining[1:] if a.signals.get("chg_p", 0.0) >= FALLBACK_MULTI
                   and (self.auditor is None or a.score >= self.auditor.multi_threshold)]
        # Or a separate part of the facts ("另查明…", "二、…") is, by the charge classifier, most likely its charge.
        parts = self._part_labels(focus) if len(defining) > 1 else {}
        chosen, separate = [defining[0]], {}
        # why a verified article is not cited: (kind, values)
        left: dict[int, tuple[str, dict]] = {pk: ("careless", {"instead": n.label}) for pk, n in careless.items()}
        for a in defining[1:]:
            # two parts of one article (345's 盗伐 and 滥伐, 175 and 175之一) join only as separate acts: _same_article
            sibling = next((c for c in chosen if _same_article(a, c) and not _concurrent(a, c)), None)
            if sibling is not None or a not in further:
                names = [self._charge_of(c, view["charges"]) for c in chosen]
                act = self._separate_act(a, parts, names, view["charges"])
                if act is None:
                    if sibling is None:
                        left[a.article_pk] = ("one_act", {})
                    elif a in further and a.signals.get("chg_p", 0.0) > sibling.signals.get("chg_p", 0.0):
                        chosen[chosen.index(sibling)] = a
                        left[sibling.article_pk] = ("sibling", {"instead": a.label})
                    else:
                        left[a.article_pk] = ("sibling", {"instead": sibling.label})
                    continue
                separate[a.article_pk] = act
            # a concurrence clause ("同时构成…依照处罚较重的规定") weighs one act under two articles, not separate acts
            rival = None if a.article_pk in separate else next((c for c in chosen if _concurrent(a, c)), None)
            if rival is None:
                chosen.append(a)
            elif _heavier(a, rival):  # one act under two articles with a concurrence clause: the heavier one
                chosen[chosen.index(rival)] = a
                left[rival.article_pk] = ("concurrence", {"instead": a.label})
            else:
                left[a.article_pk] = ("concurrence", {"instead": rival.label})
        for a in list(chosen):  # an article defined by a grave result the facts do not show: the basic one instead
            basic = _basic_instead(a, verified)
            if basic is None:
                continue
            if basic in chosen:
                chosen.remove(a)
            else:
                chosen[chosen.index(a)] = basic
            left.pop(basic.article_pk, None)
            left[a.article_pk] = ("no_result", {"instead": basic.label})
        charges, cited = [], []
        for a in chosen:
            charge = self._charge_of(a, view["charges"])
            if charge not in charges:
                charges.append(charge)
                cited.append(a)
            else:
                left[a.article_pk] = ("same_charge", {"charge": charge, "instead": cited[charges.index(charge)].label})
        matching = {label for c in charges for label in self._labels_for(c)}
        share = {a.article_pk: max((research.fact_shares.get(label, {}).get(a.article_pk, 0.0) for label in matching),
                                   default=0.0) for a in verified if not a.charges}
        cited += [a for a in verified if not a.charges and (  # articles defining no charge that go with a chosen one:
            _unit_provision_of(a, cited)  # a unit-crime provision covering one of its articles
            or _repeat_provision(a)  # a repeat offender's (356): it passed only with the earlier conviction recited
            or share[a.article_pk] >= COMPANION_SHARE)]  # or, in the precedents, a punishment article: 383 for 382
        not_cited = _not_cited(verified, cited, left, share)
        labels = [self._label_of(c, view["charges"]) for c in charges]
        precedents = graph.cases(audit.verified_cases)
        ranged = [a for a in cited if a.charges]
        predicted = self._term_prediction(focus, labels, ranged)
        estimate = _as_term(predicted)
        term = _with_precedents(estimate, precedents, charges) if estimate is not None else _precedent_term(precedents, charges)
        basis = term_basis(focus, [(a.key, a.label, a.text) for a in ranged], self._standards(ranged), model=estimate,
                           precedent_months=_precedent_months(precedents, charges), share=PRECEDENT_TERM_SHARE,
                           term=term, severe=_severe(predicted))
        # the precedents the term weighed, when the basis says they did (not beside a model's life or death)
        weighed = {c.pk for c in _with_known_term(precedents, charges)} if basis.get("precedents") else set()
        reasoning = _reasoning(cited, charges, term, evidence, weighed)
        why = []  # what the separate parts added, quoted
        for a in chosen:
            charge, p, part = separate.get(a.article_pk, (None, 0.0, ""))
            if charge in charges:
                why.append(reasons.why(reasons.JUDGMENT_SEPARATE_ACT, charge=charge, article=a.label, p=round(p, 4),
                                       quote=part[:40]))
        return Judgment(status=Status.JUDGED, charges=charges, article_keys=[a.key for a in cited],
                        article_pks=[a.article_pk for a in cited], term=term, reasoning=reasoning, evidence=evidence,
                        scores={self._charge_of(a, view["charges"]): round(a.score, 6) for a in reversed(defining)},
                        term_basis=basis, why=why, not_cited=not_cited)

    def _part_labels(self, focus: str) -> dict[str, tuple[float, str]]:
        """For facts of several separate parts (focus.separate_parts): each part's most likely charge label by the
        charge classifier, at p ≥ PART_CHARGE_P, with that p and the part (the likelier part where two agree); read
        once per focused text (the Auditor and the Adjudicator both ask)."""
        view = self._focus_view(focus)
        if view["parts"] is None:
            view["parts"] = self._read_parts(focus)
        return view["parts"]

    def _read_parts(self, focus: str) -> dict[str, tuple[float, str]]:
        parts = separate_parts(focus) if self.charge_model is not None else []
        found: dict[str, tuple[float, str]] = {}
        for part in parts if len(parts) > 1 else []:
            ranking = _ranking(self.charge_model, self.tokenize(part))
            label = max(ranking.p, key=lambda k: (ranking.p[k], k), default=None)
            p = ranking.p[label] if label is not None else 0.0
            if p >= PART_CHARGE_P and p > found.get(label, (0.0,))[0]:
                found[label] = (p, part)
        return found

    def _separate_act(self, a: ArticleAudit, parts: dict[str, tuple[float, str]], chosen: list[str],
                      ranking: Ranking) -> tuple[str, float, str] | None:
        """(charge, p, part) when a part of the facts is most likely a charge of the verified article ``a``; None
        too when that charge names a form of one already chosen (受贿罪 beside 单位受贿罪): one scheme, not two
        acts (chosen on the development split, docs/RESULTS.md)."""
        charge = self._charge_of(a, ranking)
        if any(charge.rstrip("罪") in c or c.rstrip("罪") in charge for c in chosen):
            return None
        return next(((charge, *parts[label]) for c in a.charges for label in self._labels_for(c) if label in parts),
                    None)

    def _charge_of(self, a: ArticleAudit, ranking: Ranking) -> str:
        """The charge of a verified article: the one whose labels the charge classifier finds most likely."""
        def best(charge: str) -> float:
            return max((ranking.z.get(label, -math.inf) for label in self._labels_for(charge)), default=-math.inf)

        return max(a.charges, key=lambda c: (best(c), -a.charges.index(c)))

    def _label_of(self, charge: str, ranking: Ranking) -> str:
        """The charge classifier's most likely label standing for a statute charge (the charge itself if none)."""
        labels = self._labels_for(charge)
        return max(labels, key=lambda label: (ranking.z.get(label, -math.inf), label)) if labels else charge

    def _term(self, focus: str, labels: list[str], articles: list[ArticleAudit] | None = None) -> Term | None:
        return _as_term(self._term_prediction(focus, labels, articles))

    def _term_prediction(self, focus: str, labels: list[str], articles: list[ArticleAudit] | None = None):
        """The term model's prediction for these charges (labels of the charge classifier) and the facts'
        circumstances (sentencing.term_inputs); a model trained on the facts alone reads the facts only. With
        the verified ``articles`` of the charges, its adjustment also reads the sentencing facts against their
        statutory ranges and amount standards (sentencing.sentencing_features); without (the classifier_only
        baseline), the linear estimate stands. A TermModel's dict (textmodel.TermModel.predict), or a Term."""
        if self.term_model is None:
            return None
        tokens = self._focus_view(focus)["tokens"]
        if "term_inputs" in str((self.term_model.metadata or {}).get("inputs", "")):
            tokens = term_inputs(tokens, labels, [label for _, label in extract_features(focus).labels()])
        context = None
        if articles:
            context = sentencing_features(focus, charges=len(labels), ranges=[statutory_range(a.text) for a in articles],
                                          standards=self._standards(articles))
        return self.term_model.predict(tokens, context) if context is not None else self.term_model.predict(tokens)

    def _standards(self, articles: Sequence[ArticleAudit]):
        """The amount standards of these articles' interpretations, the lowest per tier."""
        return lowest_standards(self.elements.standards.get(a.article_pk, {}) for a in articles)

    def classify(self, focus: str) -> Judgment:
        """The classifier_only baseline: the trained models alone (labels with p >= 0.5, and the best always)."""
        view = self._focus_view(focus)
        charges = _labels_at(view["charges"])
        articles = _labels_at(view["articles"])
        if not charges:
            return Judgment(status=Status.NO_EVIDENCE, message="no trained charge classifier",
                            why=[reasons.why(reasons.JUDGMENT_NO_CLASSIFIER)])
        return Judgment(status=Status.JUDGED, charges=charges, article_keys=articles, term=self._term(focus, charges),
                        reasoning="the trained classifiers alone (evaluation baseline: no retrieval, no audit, no evidence)",
                        message="classifier_only baseline", why=[reasons.why(reasons.JUDGMENT_CLASSIFIER_ONLY)])


_CONCURRENCE = re.compile(r"同时构成.{0,30}?犯罪的，?依照处罚较重的规定")


def _same_article(a: ArticleAudit, b: ArticleAudit) -> bool:
    """``a`` and ``b`` are parts of one article ("345" and "345-1", "175" and "175-1"): distinct offences that one act
    does not commit together. A further part joins only as a separate act; else, when it would be a further charge,
    it replaces the cited part if the charge classifier finds its charge likelier. On the development split the
    judgments citing two parts of one article were right 2 times in 23, mostly 345's paragraph on purchase cited
    beside the 滥伐 or 盗伐 the classifier read (docs/RESULTS.md, seventeenth round). Parts that provide for
    concurrence (133 and 133之一) are left to that rule: the heavier is cited."""
    return a.key.partition("-")[0] == b.key.partition("-")[0]


_BASIC = "尚未造成严重后果"
_RESULT_ITEM = re.compile(r"严重后果|重伤|死亡|重大损失")


def _basic_instead(a: ArticleAudit, verified: list[ArticleAudit]) -> ArticleAudit | None:
    """The verified basic article of ``a``'s charge to cite instead of ``a`` when ``a`` is defined by a grave result
    and the facts show none of its items asking for one: 118 ("破坏电力…设备，危害公共安全，尚未造成严重后果的") for
    119 ("…造成严重后果的，处十年以上有期徒刑"), 114 for 115. On the development split 119 was cited twice for damage of a
    few thousand yuan (docs/RESULTS.md, seventeenth round). None when ``a`` is itself basic, names no result, or the
    facts show one."""
    results = [i for i in a.items if _RESULT_ITEM.search(i.question)]
    if _BASIC in a.text or not results or any(i.satisfied for i in results):
        return None
    return next((b for b in verified if b is not a and set(b.charges) & set(a.charges) and _BASIC in b.text), None)


def _concurrent(a: ArticleAudit, b: ArticleAudit) -> bool:
    """One of the two articles says that conduct also constituting another offence is punished under the
    heavier provision (imaginative concurrence, e.g. 133之一 beside 133): they are not cumulated."""
    return bool(_CONCURRENCE.search(a.text) or _CONCURRENCE.search(b.text))


def _heavier(a: ArticleAudit, b: ArticleAudit) -> bool:
    ra, rb = statutory_range(a.text), statutory_range(b.text)
    key = lambda r: (r.death, r.life, r.max_months) if r else (False, False, -1)  # noqa: E731
    return key(ra) > key(rb)


def _careless_instead(articles: Sequence[ArticleAudit], verified: list[ArticleAudit]) -> dict[int, ArticleAudit]:
    """The verified articles of an intentional offence the facts show was committed by carelessness, each with the
    negligence provision cited instead: one that passed with its item asking for 过失 shown (provisions.negligent_form)
    displaces the articles sharing a charge with its article's first paragraph (115-1: 115, and 114); shown by a
    party's argument ("认为…属过失放火"), it does not (provisions.carelessness_shown). The paragraph is looked up
    among all the candidates (``articles``): it need not have passed."""
    instead = {}
    for n in verified:
        if not (n.charges and provisions.negligent_form(n.text)
                and any(provisions.carelessness_shown(i.question, i.satisfied, i.span_text) for i in n.items)):
            continue
        number = provisions.key_of(n.key)[0]
        first = next((m for m in articles if provisions.key_of(m.key) == (number, 0)), None)
        intended = set(first.charges) if first is not None else set()
        instead.update((a.article_pk, n) for a in verified if set(a.charges) & intended)
    return instead


def _unit_decisions(decided: list[tuple[ArticleAudit, int]]) -> dict[int, tuple[ItemVerdict | None, list[str]]]:
    """The unit-crime provisions among the candidates (provisions.unit_scope), each with the verdict of its
    item that shows a unit crime (None when not shown) and the labels of the passed articles it covers: it
    applies when both are there, whatever its other evidence."""
    found = {}
    for a, _ in decided:
        scope = provisions.unit_scope(a.text) if not a.charges else None
        if scope is None:
            continue
        shown = next((i for i in a.items if i.satisfied and provisions.UNIT_ITEM_RE.search(i.question)), None)
        covered = [b.label for b, _ in decided if b.passed and b.charges and scope.covers(provisions.key_of(b.key))]
        found[a.article_pk] = (shown, covered)
    return found


_Definition = tuple[str, ItemVerdict | None, list[str]]  # the term, the item showing it, the articles using it


def _definition_decisions(decided: list[tuple[ArticleAudit, int]]) -> dict[int, _Definition]:
    """The definition provisions among the candidates (provisions.defined_term), each with its term, its first
    item the facts show (None when none is) and the labels of the passed articles that use the term: it applies
    when both are there."""
    found = {}
    for a, _ in decided:
        term = provisions.defined_term(a.text) if not a.charges else None
        if term is None:
            continue
        shown = next((i for i in a.items if i.satisfied), None)
        covered = [b.label for b, _ in decided if b.passed and b.charges and term in b.text]
        found[a.article_pk] = (term, shown, covered)
    return found


def _repeat_provision(a: ArticleAudit) -> bool:
    """``a`` defines no charge and asks for an earlier conviction (356: "因…毒品罪被判过刑，又犯本节规定之罪的")."""
    return not a.charges and any(past_offences(i.question) for i in a.items)


def _repeat_decisions(decided: list[tuple[ArticleAudit, int]]) -> dict[int, tuple[ItemVerdict | None, list[str]]]:
    """The provisions for repeat offenders among the candidates (356), each with its earlier-conviction item when the
    facts recite one (None when not) and the passed articles defining a charge whose text names the offences' object
    (毒品: the section's offences, 容留他人吸毒 too): it applies when both are there, whatever its other evidence. The
    present drug deal alone never shows it: the earlier conviction is what the article adds."""
    found = {}
    for a, _ in decided:
        if not _repeat_provision(a):
            continue
        past = next((i for i in a.items if i.satisfied and past_offences(i.question)), None)
        nouns = {offences[1] for i in a.items if (offences := past_offences(i.question))}
        covered = [b.label for b, _ in decided if b.passed and b.charges and any(n in b.text for n in nouns)]
        found[a.article_pk] = (past, covered)
    return found


def _punishment_decisions(decided: list[tuple[ArticleAudit, int]]) -> dict[int, tuple[str, list[str], list[str]]]:
    """The punishment provisions among the candidates (provisions.punished_charge: 383, 386, 390), each with the
    offence it punishes and the labels of the passed articles defining it, and the provisions defining no charge that
    a passed article, or an applying punishment provision, punishes by (provisions.punished_by: 383 through 386),
    with the labels of those: it applies when either list has one, whatever its own items show."""
    passed = [a for a, _ in decided if a.passed]
    found = {}
    for a, _ in decided:
        charge = provisions.punished_charge(a.text) if not a.charges else None
        if charge:
            found[a.article_pk] = (charge, [b.label for b in passed if charge in b.charges], [])
    # A punishment provision applies by what its offence's articles do, never by its own P: 386 passed by the Auditor
    # while no article of 受贿罪 applies does not carry 383.
    applying = ([a for a in passed if a.article_pk not in found]
                + [a for a, _ in decided if a.article_pk in found and found[a.article_pk][1]])
    punishes_by = {b.article_pk: provisions.punished_by(b.text) for b in applying}  # each text read once
    for a, _ in decided:
        if a.charges:
            continue
        key = provisions.key_of(a.key)
        by = [b.label for b in applying if b is not a and key in punishes_by[b.article_pk]]
        if by:
            charge, covered, _ = found.get(a.article_pk, ("", [], []))
            found[a.article_pk] = (charge, covered, by)
    return found


_OFFENCE_ITEM = re.compile(r"^是否构成(.{1,20}?罪)$")


def _offence_item_shown(provision: ArticleAudit, charge: str, article: ArticleAudit) -> None:
    """A punishment provision's item asking whether its offence is committed ("是否构成受贿罪", 386's) is shown by the
    applying ``article`` defining it (385): the first element of that article's own conduct the facts show is its
    evidence, quoted where it is."""
    element = next((i for i in sorted(article.items, key=lambda i: i.order) if shows_conduct(i) and i.span), None)
    if element is None:
        return
    for item in provision.items:
        match = _OFFENCE_ITEM.match(item.question.strip())
        if match and match.group(1) == charge and not item.satisfied:
            item.satisfied, item.span, item.span_text = True, element.span, element.span_text
            item.reasoning = f"{article.label}, which defines {charge}, applies: the facts show {element.question}"
            item.why = reasons.why(reasons.ITEM_OFFENCE_APPLIES, article=article.label, element=element.question)


def _not_cited(verified: list[ArticleAudit], cited: list[ArticleAudit], left: dict[int, tuple[str, dict]],
               share: dict[int, float]) -> list[dict]:
    """Why each verified article the judgment does not cite is left out (reasons.JUDGMENT_NOT_CITED): one act judged
    under a likelier article, a concurrence the heavier article takes, a charge already cited under another article,
    or an article defining no charge that the judged charges' precedents seldom cite."""
    out = []
    for a in verified:
        if a in cited:
            continue
        kind, values = left.get(a.article_pk, ("no_companion", {"share": round(share.get(a.article_pk, 0.0), 2)}))
        if kind == "one_act":
            values = {"instead": cited[0].label}
        out.append(reasons.why(reasons.JUDGMENT_NOT_CITED, key=a.key, article=a.label, kind=kind, **values))
    return out


def _unit_provision_of(a: ArticleAudit, cited: list[ArticleAudit]) -> bool:
    """``a`` is a unit-crime provision whose scope covers one of the cited articles that define a charge."""
    scope = provisions.unit_scope(a.text)
    return scope is not None and any(scope.covers(provisions.key_of(c.key)) for c in cited if c.charges)


def _as_term(predicted) -> Term | None:
    if isinstance(predicted, dict):  # worker.agents.models.textmodel.TermModel
        return Term(months=int(predicted["months"]), life=bool(predicted["life"]), death=bool(predicted["death"]))
    return predicted


def _severe(predicted) -> dict | None:
    """What the chance of life imprisonment or death did to the term model's answer, for the term basis: that chance
    and the fixed term's own estimate, when the answer is not that estimate (textmodel.median_sentence) and the
    chance is SEVERE_SHOWN at least (a month's rounding at a chance of 1 % is not worth the reviewer's reading).
    None otherwise, or for a model that does not say."""
    if not isinstance(predicted, dict) or "months_estimate" not in predicted:
        return None
    fixed = int(round(predicted["months_estimate"]))
    chance = min(1.0, float(predicted["p_life"]) + float(predicted["p_death"]))  # two models: their sum may pass 1
    if not (predicted["life"] or predicted["death"]) and (predicted["months"] == fixed or chance < SEVERE_SHOWN):
        return None
    return {"p": round(chance, 3), "fixed_months": fixed}


def _with_precedents(term: Term, cases, charges: list[str]) -> Term:
    """The term model's fixed term pulled towards the median term of the verified precedents convicted of a
    chosen charge (life counted as 300 months, death as 360): a geometric mean, the precedents weighing
    PRECEDENT_TERM_SHARE. Life, death, or no such precedent: the model's term stands."""
    months = _precedent_months(cases, charges)
    if term.life or term.death or not months:
        return term
    median = statistics.median(months)
    blended = math.expm1((1 - PRECEDENT_TERM_SHARE) * math.log1p(term.months) + PRECEDENT_TERM_SHARE * math.log1p(median))
    return Term(months=int(round(blended)))


def _with_known_term(cases, charges: list[str]) -> list:
    """The verified precedents convicted of a chosen charge whose term is known: those a term weighs."""
    return [c for c in cases if c is not None and c.term is not None and set(c.charges) & set(charges)]


def _precedent_months(cases, charges: list[str]) -> list[int]:
    """The terms of the verified precedents convicted of a chosen charge, in months (life 300, death 360), sorted."""
    return sorted(360 if c.term.death else 300 if c.term.life else c.term.months
                  for c in _with_known_term(cases, charges))


def _precedent_term(cases, charges: list[str]) -> Term | None:
    """Without a term model: the median term of the verified precedents convicted of a chosen charge."""
    terms = [c.term for c in _with_known_term(cases, charges)]
    if not terms:
        return None
    if sum(t.death for t in terms) * 2 > len(terms):
        return Term(death=True)
    if sum(t.life for t in terms) * 2 > len(terms):
        return Term(life=True)
    fixed = sorted(t.months for t in terms if not (t.life or t.death))
    return Term(months=int(fixed[len(fixed) // 2])) if fixed else None


def _ranking(model, tokens: list[str]) -> Ranking:
    if model is None:
        return Ranking.of({}, {})
    z = model.decision(tokens)
    p = sigmoid(z * model.calibration[:, 0] + model.calibration[:, 1])
    labels = [str(label) for label in model.labels]
    return Ranking.of(dict(zip(labels, map(float, p))), dict(zip(labels, map(float, z))))


def _vector(model, tokens: list[str]) -> dict[int, float]:
    if model is None:
        return {}
    idx, vals = model.vectorize(tokens)
    return dict(zip(idx.tolist(), vals.tolist()))


def _labels_at(ranking: Ranking, threshold: float = 0.5) -> list[str]:
    order = sorted(ranking.z, key=lambda label: (-ranking.z[label], label))
    return [label for n, label in enumerate(order) if n == 0 or ranking.p[label] >= threshold]


def names_match(label: str, charge: str, aliases: dict[str, str]) -> bool:
    """A dataset charge name stands for a statute charge: equal, aliased, or a character subsequence
    (贩卖毒品罪 → 走私、贩卖、运输、制造毒品罪), the evaluator's own rule."""
    return label == charge or aliases.get(label) == charge or is_subsequence(label, charge)


def _reasoning(chosen: list[ArticleAudit], charges: list[str], term: Term | None, evidence: list[Evidence],
               weighed: set[int]) -> str:
    """The judgment's reasons in the courts' words, citing the numbered evidence: each article with its items the
    facts show, and beside the term the numbered precedents it weighed (``weighed``: those of a judged charge)."""
    by_article = {}
    for e in evidence:
        by_article.setdefault((e.kind, e.ref), []).append(e.n)
    parts = []
    for a in chosen:
        cite = "".join(f"[{n}]" for n in by_article.get(("article", a.key), []))
        items = "".join(f"[{n}]" for n in by_article.get(("checklist", a.key), []))
        parts.append(f"依照{a.label}{cite}，经逐项审查{('，' + items + '所列要件有事实支持') if items else ''}")
    precedents = "".join(f"[{e.n}]" for e in evidence if e.kind == "precedent" and e.pk in weighed)
    text = "；".join(parts) + f"，被告人的行为构成{'、'.join(charges)}。"
    if term is not None:
        what = term_wording(term.months, life=term.life, death=term.death, kind=term.kind)
        text += f"参照类似案例{precedents}，" if precedents else ""
        text += f"建议刑期：{what}。"
    return text

