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


def _choose(key: str, yes: Sentence, no: Sentence) -> Callable[[dict], Sentence]:
    return lambda values: yes if values.get(key) else no


_ELEMENTS = gettext_lazy("%(supported)s of %(total)s elements shown; score %(p)s, threshold %(threshold)s; "
                         "carried by %(signals)s")

SENTENCES: dict[str, Sentence | Callable[[dict], Sentence]] = {
    codes.ITEM_TERMS_IN_SENTENCE: Sentence(gettext_lazy("A sentence of the facts states this element."),
                                           gettext_lazy("%(share)s of the element's terms occur in one sentence")),
    codes.ITEM_FEATURE_MATCH: Sentence(gettext_lazy("The facts show it: %(features)s.")),
    codes.ITEM_ANCHOR: Sentence(gettext_lazy("The facts name its decisive term: %(word)s.")),
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
    codes.ARTICLE_APPLIES: Sentence(gettext_lazy("Applies: the facts fit the offence it defines (%(supported)s of its "
                                       "%(total)s elements are stated in so many words)."), _ELEMENTS),
    codes.ARTICLE_REJECTED: Sentence(gettext_lazy("Does not apply: the facts do not fit the offence it defines (%(supported)s "
                                        "of its %(total)s elements are stated)."), _ELEMENTS),
    codes.ARTICLE_NO_ELEMENT: Sentence(gettext_lazy("Does not apply: none of its %(total)s elements is shown by the facts.")),
    codes.ARTICLE_NOT_IN_FORCE: Sentence(gettext_lazy("Does not apply: %(label)s was not in force on %(date)s.")),
    codes.ARTICLE_UNCHECKED: Sentence(gettext_lazy("Not checked: this run left the Auditor agent out.")),
    codes.ARTICLE_MODEL: _choose("applies", Sentence(gettext_lazy("Applies, in the language model's assessment.")),
                                 Sentence(gettext_lazy("Does not apply, in the language model's assessment."))),
    codes.ARTICLE_REVIEWER: lambda v: (
        Sentence(gettext_lazy("Decided by the reviewer: %(reason)s — %(outcome)s.")) if v.get("reason")
        else Sentence(gettext_lazy("The reviewer changed element(s) %(items)s: %(supported)s of %(total)s shown — %(outcome)s."))),
    codes.PRUNED_ARTICLE: Sentence(gettext_lazy("The Auditor agent found that this article does not apply.")),
    codes.PRUNED_CASE: Sentence(gettext_lazy("None of this precedent's articles or charges was verified.")),
    codes.PRUNED_CHARGE: Sentence(gettext_lazy("No article defining this charge was verified.")),
    codes.PRUNED_BY_REVIEWER: Sentence(gettext_lazy("Excluded by the reviewer: %(reason)s")),
}


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
            out[key] = "、".join(f"{name} {float(v):+.2f}" for name, v in (value or {}).items()
                                if isinstance(v, (int, float))) or "—"
        elif key in ("features", "items"):
            out[key] = "、".join(str(v) for v in value or [])
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
    sentence = entry(values | {k: why[k] for k in ("satisfied", "verdict", "applies", "reason") if k in why}) \
        if callable(entry) else entry
    try:
        text = str(sentence.text) % values
        detail = str(sentence.detail) % values if sentence.detail else ""
    except (KeyError, TypeError, ValueError):
        return {"text": fallback, "detail": "", "quote": "", "known": False}
    return {"text": text, "detail": detail, "quote": fallback if code in QUOTED else "", "known": True}
