"""The structured reasons of a bundle (worker/agents/reasons.py) as sentences in the page language.

Each code has one row in SENTENCES: the sentence a clerk or reviewer reads, and the analysis
detail (scores, thresholds) that the pages put behind "analysis details". A code may map to a
function of its values when the sentence depends on one of them (verdict yes or no). A code this
table does not know, or values a sentence cannot be filled with, fall back to the free text the
pipeline wrote beside the code (``reasoning`` / ``reason``), so a new code never breaks a page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_lazy

from worker.agents import reasons as codes


@dataclass(frozen=True)
class Sentence:
    text: str  # lazy: %(name)s placeholders filled from the reason's values
    detail: str = ""  # lazy: the analysis detail, same placeholders


Choice = Sentence | Callable[[dict], Sentence]


def _choose(key: str, yes: Choice, no: Choice) -> Callable[[dict], Sentence]:
    """``yes`` when the value ``key`` is true, else ``no``; either may itself be a choice."""
    def pick(values: dict) -> Sentence:
        chosen = yes if values.get(key) else no
        return chosen(values) if callable(chosen) else chosen

    return pick


_ELEMENTS = gettext_lazy("%(supported)s of %(total)s elements shown; score %(p)s, threshold %(threshold)s; "
                         "carried by %(signals)s")
_ELEMENTS_UNWEIGHTED = gettext_lazy("%(supported)s of %(total)s elements shown; score %(p)s, threshold %(threshold)s")


def _article(text: str) -> Callable[[dict], Sentence]:
    """An article decision; its detail names the evidence that carried it when the Auditor weighed any."""
    return lambda values: Sentence(text, _ELEMENTS if values.get("signals", "—") != "—" else _ELEMENTS_UNWEIGHTED)


SENTENCES: dict[str, Sentence | Callable[[dict], Sentence]] = {
    # All of the element's words in one sentence, or enough of them (elements.TERMS_SHARE): the reviewer is told which.
    codes.ITEM_TERMS_IN_SENTENCE: lambda v: Sentence(
        gettext_lazy("A sentence of the facts states this element.") if float(v.get("share", 1.0)) >= 1.0
        else gettext_lazy("A sentence of the facts uses %(share)s of this element's words; whether it states the "
                          "element is the reviewer's to check."),
        gettext_lazy("%(share)s of the element's terms occur in one sentence")),
    codes.ITEM_FEATURE_MATCH: Sentence(gettext_lazy("The facts show it: %(features)s.")),
    codes.ITEM_ANCHOR: Sentence(gettext_lazy("The facts name its decisive term: %(word)s; the rest of the element is "
                                             "not checked.")),
    codes.ITEM_PAST_CONVICTION: Sentence(gettext_lazy("The facts recite an earlier conviction of an offence it "
                                                      "names.")),
    codes.ITEM_REPEAT_NAMED: Sentence(gettext_lazy("The facts call the defendant a “%(name)s”: an earlier conviction "
                                                   "of an offence it names, by its legal name; no recital of it.")),
    codes.ITEM_OFFENCE_APPLIES: Sentence(gettext_lazy("%(article)s, which defines the offence, applies: the facts show "
                                                      "its element “%(element)s”.")),
    codes.ITEM_AMOUNT_REACHED: Sentence(gettext_lazy("The facts state %(amount)s, which reaches %(standard)s, the lowest "
                                                     "standard of “%(tier)s” the interpretations set."),
                                        gettext_lazy("standard from: %(source)s")),
    codes.ITEM_AMOUNT_BELOW: Sentence(gettext_lazy("The largest amount the facts state, %(amount)s, is below %(standard)s, "
                                                   "the lowest standard of “%(tier)s” the interpretations set."),
                                      gettext_lazy("standard from: %(source)s")),
    codes.ITEM_QUANTITY_WITHIN: Sentence(gettext_lazy("The facts state %(quantity)s, within the %(range)s the element names.")),
    codes.ITEM_QUANTITY_OUTSIDE: Sentence(gettext_lazy("The facts state %(quantity)s, outside the %(range)s the element names.")),
    codes.ITEM_QUANTITY_NOT_STATED: Sentence(gettext_lazy("The facts state no quantity of %(substances)s: "
                                                          "nothing shows the %(range)s the element names.")),
    codes.ITEM_NOT_AN_ELEMENT: Sentence(gettext_lazy("This item concerns the sentence or the classification, "
                                                 "not an element the facts have to show.")),
    codes.ITEM_NOT_SHOWN: Sentence(gettext_lazy("No sentence of the facts states this element."),
                                   gettext_lazy("at most %(share)s of the element's terms occur in any sentence")),
    codes.ITEM_VERIFIER: _choose("satisfied",
                                 Sentence(gettext_lazy("The facts state this element (checked by the element verifier)."),
                                          gettext_lazy("verifier %(p)s ≥ threshold %(threshold)s; best sentence %(share)s")),
                                 Sentence(gettext_lazy("The facts do not state this element (checked by the element verifier)."),
                                          gettext_lazy("verifier %(p)s < threshold %(threshold)s; best sentence %(share)s"))),
    codes.ITEM_MODEL: _choose("verdict", Sentence(gettext_lazy("The language model finds this element in the facts.")),
                              Sentence(gettext_lazy("The language model does not find this element in the facts."))),
    codes.ITEM_REVIEWER: Sentence(gettext_lazy("Set by the reviewer: %(reason)s (the Auditor agent had found: %(auditor)s)")),
    codes.ARTICLE_APPLIES: _article(gettext_lazy("Applies: the facts fit the offence it defines (%(supported)s of its "
                                                 "%(total)s elements are stated in so many words).")),
    codes.ARTICLE_BEST_SUPPORTED: _article(gettext_lazy("Applies, with less certainty: no candidate article reached the "
                                                        "Auditor agent's threshold, and this one is the most probable of "
                                                        "those with an element shown (%(supported)s of %(total)s).")),
    codes.ARTICLE_SEPARATE_ACT: _article(gettext_lazy(
        "Applies as a further act: below the Auditor agent's threshold, but a separate part of the facts "
        "(“%(quote)s…”) is most likely %(label)s (probability %(part_p)s) and shows an element of its conduct.")),
    codes.ARTICLE_REJECTED: _article(gettext_lazy("Does not apply: the facts do not fit the offence it defines "
                                                  "(%(supported)s of its %(total)s elements are stated).")),
    codes.ARTICLE_NO_ELEMENT: _article(gettext_lazy("Does not apply: none of its %(total)s elements is shown by the facts.")),
    codes.ARTICLE_NO_CONDUCT: _article(gettext_lazy(
        "Does not apply: the facts show only elements every offence of its kind shares (%(supported)s of %(total)s: an "
        "amount, the intent, the victim, or what the offender did after the offence), none of its own conduct.")),
    codes.ARTICLE_NOT_IN_FORCE: Sentence(gettext_lazy("Does not apply: %(label)s was not in force on %(date)s.")),
    codes.ARTICLE_UNCHECKED: Sentence(gettext_lazy("Not checked: this run left the Auditor agent out.")),
    codes.ARTICLE_MODEL: _choose("applies", Sentence(gettext_lazy("Applies, in the language model's assessment.")),
                                 Sentence(gettext_lazy("Does not apply, in the language model's assessment."))),
    codes.ARTICLE_UNIT: _choose("applies", Sentence(gettext_lazy(
        "Applies: a unit committed the offence (“%(quote)s”), and this unit-crime provision covers %(covered)s.")),
        _choose("shown",
                Sentence(gettext_lazy("Does not apply: no article in this unit-crime provision's scope applies.")),
                Sentence(gettext_lazy("Does not apply: the facts do not show that a unit committed the offence.")))),
    codes.ARTICLE_DEFINITION: _choose("applies", Sentence(gettext_lazy(
        "Applies: this provision defines %(term)s, the facts show what it defines (“%(quote)s”), and %(covered)s, "
        "which applies, uses the term.")),
        _choose("covered",
                Sentence(gettext_lazy("Does not apply: the facts show nothing this provision defines as %(term)s.")),
                Sentence(gettext_lazy("Does not apply: no article that applies uses the term %(term)s.")))),
    codes.ARTICLE_REPEAT: _choose("applies", Sentence(gettext_lazy(
        "Applies: the facts recite an earlier conviction of an offence this provision names (“%(quote)s”), and "
        "%(covered)s, whose offence it makes heavier, applies.")),
        _choose("shown",
                Sentence(gettext_lazy("Does not apply: no article of an offence this provision makes heavier "
                                      "applies.")),
                Sentence(gettext_lazy("Does not apply: the facts recite no earlier conviction of an offence this "
                                      "provision names.")))),
    codes.ARTICLE_PUNISHMENT: lambda v: (
        Sentence(gettext_lazy("Applies: %(by)s, which applies, punishes by this provision."))
        if v.get("by") else
        Sentence(gettext_lazy("Applies: this provision gives the penalty of %(charge)s, which %(covered)s, "
                              "applying, defines."))
        if v.get("applies") else
        Sentence(gettext_lazy("Does not apply: this provision gives the penalty of %(charge)s, and no article "
                              "defining that offence applies, nor one punishing by it."))),
    codes.ARTICLE_REVIEWER: lambda v: (
        Sentence(gettext_lazy("Decided by the reviewer: %(reason)s — %(outcome)s.")) if v.get("reason")
        else Sentence(gettext_lazy("The reviewer changed element(s) %(items)s: %(supported)s of %(total)s shown — %(outcome)s."))),
    codes.PRUNED_ARTICLE: Sentence(gettext_lazy("The Auditor agent found that this article does not apply.")),
    codes.PRUNED_CASE: lambda v: {
        "charges": Sentence(gettext_lazy("No verified article defines a charge of this precedent.")),
        "articles": Sentence(gettext_lazy("Every article this precedent cites failed the audit.")),
    }.get(v.get("cause"), Sentence(gettext_lazy("None of this precedent's articles or charges was verified."))),
    codes.PRUNED_CHARGE: Sentence(gettext_lazy("No article defining this charge was verified.")),
    codes.PRUNED_BY_REVIEWER: Sentence(gettext_lazy("Excluded by the reviewer: %(reason)s")),
    codes.JUDGMENT_NO_CANDIDATE: Sentence(gettext_lazy("The Researcher agent found no candidate article.")),
    codes.JUDGMENT_REVIEWER_LEFT_NONE: Sentence(gettext_lazy("After the reviewer's changes no article applies.")),
    codes.JUDGMENT_NOTHING_VERIFIED: lambda v: (
        Sentence(gettext_lazy("The Auditor agent verified no candidate article.")) if "label" not in v
        else Sentence(gettext_lazy("The Auditor agent verified no candidate article; the most probable, %(label)s, "
                                   "has none of its %(total)s elements shown by the facts."),
                      gettext_lazy("score %(p)s")) if not v.get("shown")
        else Sentence(gettext_lazy("The Auditor agent verified no candidate article; the most probable, %(label)s, "
                                   "has %(shown)s of its %(total)s elements shown, but its score is below the "
                                   "Auditor agent's threshold."), gettext_lazy("score %(p)s"))),
    codes.JUDGMENT_NO_CHARGE: Sentence(gettext_lazy("No verified article defines a charge.")),
    codes.JUDGMENT_UNRESOLVED: lambda v: (
        Sentence(gettext_lazy("The reasoning cites evidence %(citations)s, which is not among the verified evidence."))
        if v.get("citations") else Sentence(gettext_lazy("The reasoning cites no evidence."))),
    codes.JUDGMENT_MALFORMED: Sentence(gettext_lazy("The reasoning has malformed citations: %(citations)s.")),
    codes.JUDGMENT_UNVERIFIED: Sentence(gettext_lazy("The judgment cites articles the Auditor agent did not verify: "
                                                     "%(articles)s.")),
    codes.JUDGMENT_NOT_IN_FORCE: Sentence(gettext_lazy("%(articles)s was not in force on %(date)s.")),
    codes.JUDGMENT_STRAY_CHARGES: lambda v: (
        Sentence(gettext_lazy("No verified article defines the charge(s) %(charges)s.")) if v.get("charges")
        else Sentence(gettext_lazy("The judgment names no charge."))),
    codes.JUDGMENT_TERM_CAPPED: lambda v: (
        Sentence(gettext_lazy("Term capped at %(months)s months, the maximum of combined punishment (Article 69); "
                              "the estimate was %(predicted)s months.")) if v.get("basis") == "combined"
        else Sentence(gettext_lazy("Term capped at %(months)s months, the most a term combined with the remaining "
                                   "sentence may reach (Articles 69 and 71); the estimate was %(predicted)s "
                                   "months.")) if v.get("basis") == "remaining"
        else Sentence(gettext_lazy("Term capped at %(months)s months, the statutory maximum of the verified articles; "
                                   "the estimate was %(predicted)s months."))),
    codes.JUDGMENT_TERM_RAISED: lambda v: (
        Sentence(gettext_lazy("Term raised to %(months)s months, the remaining sentence the facts state: the new term "
                              "is combined with it (Articles 69 and 71); the estimate was %(predicted)s "
                              "months."))
        if v.get("basis") == "remaining"
        else Sentence(gettext_lazy("Term raised to %(months)s months, the least the verified article provides for an "
                                   "amount of %(tier)s, which the facts reach in every region: the facts show no "
                                   "ground for a sentence below it; the estimate was %(predicted)s months."))
        if v.get("tier")
        else Sentence(gettext_lazy("Term raised to %(months)s months, the least the verified article provides for the "
                                   "harm the facts show, %(harm)s: the facts show no ground for a sentence below it; "
                                   "the estimate was %(predicted)s months."))
        if v.get("harm")
        else Sentence(gettext_lazy("Term raised to %(months)s months, the least the verified article provides for "
                                   "%(grams)s grams of heroin or methamphetamine, stated in a sentence of the facts "
                                   "that tells of a seizure or a test: the facts show no ground for a sentence below "
                                   "it; the estimate was %(predicted)s months."))
        if v.get("grams")
        else Sentence(gettext_lazy(
            "Term raised to %(months)s months, the least the verified articles provide: the facts show no ground for "
            "a sentence below it; the estimate was %(predicted)s months."))),
    codes.JUDGMENT_SEPARATE_ACT: Sentence(gettext_lazy("%(charge)s is added as a further charge: a separate part of "
                                                       "the facts (“%(quote)s…”) is most likely this offence, and "
                                                       "%(article)s passed the Auditor agent."),
                                          gettext_lazy("charge classifier on that part %(p)s")),
    codes.JUDGMENT_NOT_CITED: lambda v: {
        "one_act": Sentence(gettext_lazy("The judgment holds one act, judged under %(instead)s, the more probable "
                                         "verified article; neither the classifiers nor a separate part of the facts "
                                         "make %(article)s a further charge.")),
        "concurrence": Sentence(gettext_lazy("One act under two articles that provide for concurrence: the heavier, "
                                             "%(instead)s, is cited.")),
        "same_charge": Sentence(gettext_lazy("Its charge, %(charge)s, is already cited under %(instead)s.")),
        "sibling": Sentence(gettext_lazy("Another part of the same article, %(instead)s, is cited: the charge "
                                         "classifier finds its charge the more probable, one act does not commit "
                                         "both, and no separate part of the facts makes %(article)s a further "
                                         "charge.")),
        "no_result": Sentence(gettext_lazy("It provides for a grave result (serious consequences, serious injury, "
                                           "death or heavy loss) that the facts do not show: %(instead)s, the same "
                                           "offence without that result, is cited.")),
        "careless": Sentence(gettext_lazy("The facts show carelessness, not intent: %(instead)s, the offence "
                                          "committed by negligence, is cited instead.")),
        "no_companion": Sentence(gettext_lazy("It defines no charge and covers no cited article as a unit-crime "
                                              "provision; the precedents of the judged charges cite it in "
                                              "%(share)s of their cases, and half is needed.")),
    }.get(v.get("kind"), Sentence(gettext_lazy("The Auditor agent verified it; the judgment does not cite it."))),
    codes.JUDGMENT_DEATH_NOT_PROVIDED: lambda v: (
        Sentence(gettext_lazy("The verified articles do not provide the death penalty; life imprisonment instead."))
        if v.get("life")
        else Sentence(gettext_lazy("The verified articles do not provide the death penalty; %(months)s months "
                                   "instead."))),
    codes.JUDGMENT_LIFE_NOT_PROVIDED: Sentence(gettext_lazy("The verified articles do not provide life imprisonment; "
                                                            "%(months)s months instead.")),
    codes.JUDGMENT_STAGE_FAILED: Sentence(gettext_lazy("The %(stage)s stage failed."), "%(detail)s"),
    codes.JUDGMENT_NO_CLASSIFIER: Sentence(gettext_lazy("No charge classifier has been trained.")),
    codes.JUDGMENT_CLASSIFIER_ONLY: Sentence(gettext_lazy("Evaluation baseline: the trained classifiers alone, "
                                                          "without retrieval, audit or evidence.")),
}


# The kinds of evidence the Auditor weighs, as a reader names them. The learned Auditor reports its
# contributions by group (worker/agents/stages/auditor/signals.GROUPS) or by signal (signals.FEATURES); both spellings
# are here, so a stored bundle of either kind reads the same. A name not listed is shown as it is.
_CHARGE = gettext_lazy("charge classifier")
_ARTICLE = gettext_lazy("article classifier")
_RULE = gettext_lazy("statute text similarity")
_FACT = gettext_lazy("precedents of the charge")
_SEM = gettext_lazy("precedents (semantic path)")
_COM = gettext_lazy("precedents (community path)")
_CHG = gettext_lazy("precedents (charge path)")
_FLAT = gettext_lazy("precedents (plain search)")
_ART = gettext_lazy("article search path")
_ITEMS = gettext_lazy("checklist items")
SIGNAL_LABELS = {
    "charge classifier": _CHARGE, "chg_p": _CHARGE, "chg_margin": _CHARGE, "chg_rank": _CHARGE,
    "prior": gettext_lazy("how common the charge is"),
    "article classifier": _ARTICLE, "art_p": _ARTICLE, "art_margin": _ARTICLE, "art_rank": _ARTICLE,
    "legal texts (Rule graph)": _RULE, "rule_sim": _RULE, "rule_margin": _RULE, "rule_rank": _RULE,
    "precedents of the charge (Fact graph)": _FACT, "fact_share": _FACT,
    "R_sem": _SEM, "vote_sem": _SEM, "R_com": _COM, "vote_com": _COM, "R_chg": _CHG, "vote_chg": _CHG,
    "flat retrieval": _FLAT, "vote_flat": _FLAT, "R_art": _ART, "art_path": _ART,
    "checklist items": _ITEMS, "items_supported": _ITEMS, "items_share": _ITEMS, "item_first": _ITEMS,
    "item_p_max": _ITEMS, "item_p_mean": _ITEMS,
    "charges_defined": gettext_lazy("charges the article defines"),
    "sub_article": gettext_lazy("sub-article (之一)"),
}


def signals_render(signals: dict | None) -> str:
    """"charge classifier +1.20、statute text similarity −0.40": what carried a decision, strongest first.

    Signals of one kind (chg_p and chg_rank) are added into one label, so no label is named twice."""
    weights: dict[str, float] = {}
    for name, value in (signals or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            label = str(SIGNAL_LABELS.get(name, name))
            weights[label] = weights.get(label, 0.0) + float(value)
    ordered = sorted(weights.items(), key=lambda kv: -abs(kv[1]))
    return "、".join(f"{label} {value:+.2f}" for label, value in ordered) or "—"


# The model's own words are shown beside the sentence (they are its reasoning, not ours).
QUOTED = frozenset({codes.ITEM_MODEL, codes.ARTICLE_MODEL})


def _number(value, digits: int = 2) -> str:
    return number_format(round(float(value), digits), digits)


def _values(why: dict) -> dict:
    """The reason's values, each written for reading (percentages, decimals, lists, yes/no words)."""
    out = {}
    for key, value in why.items():
        if key == "share":
            out[key] = f"{round(float(value) * 100)} %"
        elif key in ("p", "threshold"):
            out[key] = _number(value)
        elif key == "signals":  # the kinds of evidence that carried an article decision, with their weight
            out[key] = signals_render(value)
        elif key in ("features", "items", "articles", "charges"):
            out[key] = "、".join(str(v) for v in value or [])
        elif key == "citations":
            out[key] = " ".join(f"[{v}]" if isinstance(v, int) else str(v) for v in value or [])
        elif key == "outcome":
            out[key] = gettext("applies") if value else gettext("does not apply")
        elif key == "auditor":
            out[key] = gettext("satisfied") if value == "satisfied" else gettext("not shown")
        else:
            out[key] = value
    out.setdefault("signals", "—")
    return out


def reason_render(why: dict | None, fallback: str = "") -> dict:
    """``{"text", "detail", "quote", "known"}`` for a bundle's ``why``; the free text when the code is unknown."""
    code = (why or {}).get("code", "")
    entry = SENTENCES.get(code)
    if entry is None:
        return {"text": fallback, "detail": "", "quote": "", "known": False}
    values = _values(why)
    # the chooser reads the raw values (a share as a number); the sentence is written with the readable ones
    sentence = entry(values | {k: why[k] for k in ("satisfied", "verdict", "applies", "reason", "share") if k in why}) \
        if callable(entry) else entry
    try:
        text = str(sentence.text) % values
    except (KeyError, TypeError, ValueError):
        return {"text": fallback, "detail": "", "quote": "", "known": False}
    try:  # an older bundle may lack the scores: the sentence stands without its detail
        detail = str(sentence.detail) % values if sentence.detail else ""
    except (KeyError, TypeError, ValueError):
        detail = ""
    return {"text": text, "detail": detail, "quote": fallback if code in QUOTED else "", "known": True}


def judgment_render(why: list | None, fallback: str = "") -> str:
    """A judgment's reasons (why there is none, what changed in it) as one line in the page language; the
    pipeline's English message when a reason is unknown or there is none (a bundle stored before the codes)."""
    texts = [reason_render(w, "") for w in why or []]
    if not texts or not all(t["known"] for t in texts):
        return fallback
    return " ".join(t["text"] for t in texts)
