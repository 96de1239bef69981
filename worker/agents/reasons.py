"""Structured reasons: what a verdict, a decision or a pruning rests on, as a code and its values.

Every ItemVerdict, ArticleAudit and Pruned carries ``why = {"code": CODE, ...values}`` beside its
free ``reasoning``/``reason`` text (English, for developers and logs). The pages render ``why`` in the
reader's language (apps/cases/reasons.py holds the translated sentences); a code they do not know
falls back to the free text. Codes are stable: add new ones, never change what an old one means
(stored bundles keep them).
"""

from __future__ import annotations

# Checklist items ------------------------------------------------------------------
ITEM_TERMS_IN_SENTENCE = "item.terms_in_sentence"  # share: the item's terms found in one sentence
ITEM_FEATURE_MATCH = "item.feature_match"  # features: abstract features of the facts that show it
ITEM_ANCHOR = "item.anchor"  # word: the item's most specific word occurs in the facts
ITEM_NOT_SHOWN = "item.not_shown"  # share: the most of its terms any sentence holds
ITEM_PAST_CONVICTION = "item.past_conviction"  # the facts recite an earlier conviction of an offence the item names
ITEM_REPEAT_NAMED = "item.repeat_named"  # name: the facts call the defendant what the provision makes of him (毒品再犯)
ITEM_OFFENCE_APPLIES = "item.offence_applies"  # article, element: "是否构成受贿罪" of 386, shown by 385 applying
# amount, tier, standard, source: the facts' largest sum reaches (or, below, misses) the lowest standard of
# an amount tier the item names, as the article's interpretations set it (worker/agents/stages/auditor/amounts.py)
ITEM_AMOUNT_REACHED = "item.amount_reached"
ITEM_AMOUNT_BELOW = "item.amount_below"
ITEM_QUANTITY_WITHIN = "item.quantity_within"  # quantity, range: the facts state a quantity within the item's range
ITEM_QUANTITY_OUTSIDE = "item.quantity_outside"  # quantity, range: ... outside it
ITEM_QUANTITY_NOT_STATED = "item.quantity_not_stated"  # substances, range: the facts state no quantity of them
ITEM_NOT_AN_ELEMENT = "item.not_an_element"  # the item is about the sentence or the classification
ITEM_VERIFIER = "item.verifier"  # p, threshold, share: the trained item verifier
ITEM_MODEL = "item.model"  # the LLM's verdict (its reasoning is the model's own text)
ITEM_REVIEWER = "item.reviewer"  # reason, auditor (satisfied | not_shown): a reviewer's override

# Articles ---------------------------------------------------------------------------
# p, threshold, supported, total, signals (the kinds of evidence that carried it, with their log-odds), learned
ARTICLE_APPLIES = "article.applies"  # the Auditor passed it
ARTICLE_BEST_SUPPORTED = "article.best_supported"  # p, threshold, supported, total: below the threshold, the best there was
ARTICLE_REJECTED = "article.rejected"  # p, threshold, supported, total, signals: below the threshold
ARTICLE_NO_ELEMENT = "article.no_element"  # total: no checklist item is shown by the facts
# supported, total: only an amount, the intent, the property, or what followed the offence are shown
ARTICLE_NO_CONDUCT = "article.no_conduct"
ARTICLE_NOT_IN_FORCE = "article.not_in_force"  # label, date
ARTICLE_UNCHECKED = "article.unchecked"  # the Auditor was switched off (ablation)
ARTICLE_MODEL = "article.model"  # the LLM's decision
# applies, shown, quote, covered: a unit-crime provision, decided by whether the facts show a unit crime (quote)
# and which passed articles of its scope it goes with (worker/agents/stages/auditor/provisions.py)
ARTICLE_UNIT = "article.unit"
# applies, shown, term, quote, covered: a definition provision (357 for 毒品), its term, what of it the facts show
# and which passed articles using the term it goes with (worker/agents/stages/auditor/provisions.py)
ARTICLE_DEFINITION = "article.definition"
# applies, shown, quote, covered: a provision for repeat offenders (356), the earlier conviction the facts recite and
# the passed articles whose offence it aggravates
ARTICLE_REPEAT = "article.repeat"
# applies, charge, covered, by: a punishment provision (383, 386, 390), the offence it punishes and the passed articles
# defining it, or the passed articles that punish by it (386 for 383)
ARTICLE_PUNISHMENT = "article.punishment"
# p, threshold, supported, total, label, part_p, quote: below the threshold, passed as a further act that a separate
# part of the facts (quote) shows, the charge classifier finding that part most likely its charge (label, part_p)
ARTICLE_SEPARATE_ACT = "article.separate_act"
ARTICLE_REVIEWER = "article.reviewer"  # reason, outcome: a reviewer's decision in a what-if

# Pruning ------------------------------------------------------------------------------
PRUNED_ARTICLE = "pruned.article"  # the article failed the audit (see its own why)
PRUNED_CASE = "pruned.case"  # cause: "charges" (none verified) or "articles" (every cited one failed)
PRUNED_CHARGE = "pruned.charge"  # no article defining the charge was verified
PRUNED_BY_REVIEWER = "pruned.reviewer"  # reason

# Judgments ----------------------------------------------------------------------------
# Why a defendant has no judgment, or what changed in one after the Adjudicator. A Judgment carries a list of these
# (``Judgment.why``) beside its English ``message``: a judgment may be capped and renamed at once.
JUDGMENT_NO_CANDIDATE = "judgment.no_candidate"  # retrieval found no candidate article
# label, shown, total, p: the most probable candidate and what it lacked (no label: no candidate was in force)
JUDGMENT_NOTHING_VERIFIED = "judgment.nothing_verified"
JUDGMENT_NO_CHARGE = "judgment.no_charge"  # no verified article defines a charge
JUDGMENT_REVIEWER_LEFT_NONE = "judgment.reviewer_left_none"  # a what-if: the reviewer's changes left no article
JUDGMENT_UNRESOLVED = "judgment.unresolved_citations"  # citations: the numbers no verified evidence has (empty: none)
JUDGMENT_MALFORMED = "judgment.malformed_citations"  # citations: the markers that are not a citation
JUDGMENT_UNVERIFIED = "judgment.unverified_articles"  # articles: cited, but not verified by the Auditor
JUDGMENT_NOT_IN_FORCE = "judgment.not_in_force"  # articles, date
JUDGMENT_STRAY_CHARGES = "judgment.stray_charges"  # charges no verified article defines (empty: no charge at all)
# months, predicted, basis ("maximum": the statutory maximum; "combined": Article 69's combined punishment;
# "remaining": combined with the remaining sentence of an offence committed while serving one, Article 71)
JUDGMENT_TERM_CAPPED = "judgment.term_capped"
# months, predicted: to the articles' minimum (no ground to go below); tier: an amount tier's clause set it; basis
# "remaining": the remaining sentence the facts state (Article 71)
JUDGMENT_TERM_RAISED = "judgment.term_raised"
# charge, article, p, quote (the part's opening words): a further charge a separate part of the facts is most likely
JUDGMENT_SEPARATE_ACT = "judgment.separate_act"
# key, article, kind, …: a verified article the judgment does not cite (Judgment.not_cited), by kind: "one_act"
# (instead: the judgment holds one act, under a likelier article), "concurrence" (instead: the heavier of two
# articles providing for concurrence), "same_charge" (charge, instead: its charge is cited under another article),
# "sibling" (instead: another part of the same article, whose charge is likelier, is cited and no separate part of
# the facts makes this one a further charge), "no_result" (instead: it provides for a grave result the facts do not
# show; the basic article of its charge is cited), "no_companion" (share: it defines no charge and the judged charges'
# precedents cite it this seldom), "careless" (instead: the facts show the act was careless, and the negligence
# provision is cited), "not_cited"
# (no reason given: the language model's judgment left it out)
JUDGMENT_NOT_CITED = "judgment.not_cited"
JUDGMENT_DEATH_NOT_PROVIDED = "judgment.death_not_provided"  # life (True: life instead) or months, basis
JUDGMENT_LIFE_NOT_PROVIDED = "judgment.life_not_provided"  # months, basis
JUDGMENT_STAGE_FAILED = "judgment.stage_failed"  # stage, detail: a model call failed (the detail is the error's text)
JUDGMENT_NO_CLASSIFIER = "judgment.no_classifier"  # no trained charge classifier
JUDGMENT_CLASSIFIER_ONLY = "judgment.classifier_only"  # the evaluation baseline: the classifiers alone

CODES = frozenset(v for k, v in dict(globals()).items() if k.isupper() and isinstance(v, str) and "." in v)


def why(code: str, **values) -> dict:
    """The ``why`` of a verdict: its code and the values its sentence needs."""
    if code not in CODES:
        raise ValueError(f"unknown reason code {code!r}")
    return {"code": code, **values}
