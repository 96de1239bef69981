"""Statutory penalty ranges read from article texts, the ceiling and the floor they put on a term, and the
sentencing facts and circumstances a term is estimated from and explained by.

Articles of the Criminal Law state their penalties in a small set of fixed
phrases: "处三年以下有期徒刑、拘役或者管制", "处三年以上十年以下有期徒刑",
"处十年以上有期徒刑、无期徒刑或者死刑", "单处罚金". :func:`statutory_range`
reads every such phrase of an article and returns the widest range they allow.

The upper end binds a judgment always; the lower end only when the facts show no
ground for going below it: mitigation (减轻处罚, Article 63 — attempt, surrender,
accessory role, …; ``REDUCTION_GROUNDS``) lawfully goes below an article's minimum,
and many real judgments do. Above the maximum no article allows anything, except combined punishment for several offences (Article 69:
at most the sum of the individual terms, and at most 20 years, or 25 years when
the sum reaches 35 years). Life imprisonment and death need an article that
provides them.

An article whose text states no penalty of its own (e.g. "依照前款的规定处罚")
gives ``None``; a judgment citing only such articles for a charge is not
checked for that charge, rather than checked against a guess.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worker.agents import reasons
from worker.agents.stages.auditor.amounts import TIERS, Standard, largest_amount, yuan_text
from worker.agents.stages.features import drug_grams, extract_features, where
from worker.agents.stages.focus import SENTENCE_RE
from worker.agents.graph_types import Term
from worker.agents.numerals import NUMERAL_CHARS, article_label, chinese_to_int

# The general part's bounds (Articles 38, 42, 45): 管制 3 months–2 years, 拘役 1–6 months,
# fixed-term imprisonment 6 months–15 years for one offence.
CONTROL = (3, 24)
DETENTION = (1, 6)
FIXED_TERM = (6, 180)
DETENTION_KIND = "detention"  # worker/agents/wording.py's kind for 拘役
COMBINED_CAP = 240  # months, Article 69
COMBINED_CAP_LONG = 300  # when the sum of the terms reaches 35 years
LONG_SUM = 420

_N = rf"([{NUMERAL_CHARS}]+)"
# "处三年以上十年以下有期徒刑", also written "刑期为三年以上十年以下".
_BETWEEN = re.compile(rf"{_N}(年|个月)以上{_N}(年|个月)以下")
_EXACTLY = re.compile(rf"处{_N}(年|个月)有期徒刑")
_AT_MOST = re.compile(rf"{_N}(年|个月)以下有期徒刑")
_AT_LEAST = re.compile(rf"{_N}(年|个月)以上有期徒刑")
# As penalties, not as words: "管制刀具" (controlled knives) is not the penalty 管制.
_DETENTION = re.compile(r"(?:处|、|或者)拘役")
_CONTROL = re.compile(r"(?:处|、|或者)管制(?!刀具|物品|药品|区)")
_NO_TERM = ("单处罚金", "或者罚金", "免除处罚", "免予刑事处罚", "单处剥夺政治权利", "单处没收财产")


@dataclass(frozen=True)
class StatutoryRange:
    min_months: int  # the lowest term a clause provides (0 when a fine alone is allowed)
    max_months: int  # the highest fixed term a clause provides
    life: bool = False
    death: bool = False


def _months(number: str, unit: str) -> int | None:
    try:
        value = chinese_to_int(number)
    except ValueError:
        return None
    return value * 12 if unit == "年" else value


def statutory_range(text: str) -> StatutoryRange | None:
    """The widest penalty range an article's text provides; None when it states none."""
    spans: list[tuple[int, int]] = []
    for match in _BETWEEN.finditer(text):
        low, high = _months(match[1], match[2]), _months(match[3], match[4])
        if low is not None and high is not None:
            spans.append((low, high))
    rest = _BETWEEN.sub("", text)  # so "三年以上十年以下" is not read again as "十年以下"
    for match in _AT_MOST.finditer(rest):
        high = _months(match[1], match[2])
        if high is not None:
            spans.append((min(FIXED_TERM[0], high), high))
    for match in _EXACTLY.finditer(rest):
        months = _months(match[1], match[2])
        if months is not None:
            spans.append((months, months))
    for match in _AT_LEAST.finditer(rest):
        low = _months(match[1], match[2])
        if low is not None:
            spans.append((low, FIXED_TERM[1]))
    if _DETENTION.search(text):
        spans.append(DETENTION)
    if _CONTROL.search(text):
        spans.append(CONTROL)
    life, death = "无期徒刑" in text, "死刑" in text
    if not spans and not (life or death):
        return None
    low = min((s[0] for s in spans), default=FIXED_TERM[1])
    if any(phrase in text for phrase in _NO_TERM):
        low = 0
    high = max((s[1] for s in spans), default=FIXED_TERM[1] if (life or death) else 0)
    return StatutoryRange(min_months=low, max_months=high, life=life, death=death)


MAXIMUM = "statutory maximum"
COMBINED = "combined punishment (Article 69)"
REMAINING = "combined with the remaining sentence (Articles 69 and 71)"


@dataclass(frozen=True)
class Ceiling:
    months: int
    life: bool
    death: bool
    basis: str  # which rule set the ceiling, for the bundle


def ceiling_for(ranges_by_charge: dict[str, list[StatutoryRange | None]]) -> Ceiling | None:
    """The most a judgment may impose for these charges; None when a charge's range is unknown.

    ``ranges_by_charge`` maps each charge to the ranges of the verified articles defining it.
    """
    if not ranges_by_charge:
        return None
    per_charge: list[StatutoryRange] = []
    for ranges in ranges_by_charge.values():
        known = [r for r in ranges if r is not None]
        if not known:
            return None
        per_charge.append(StatutoryRange(min_months=min(r.min_months for r in known),
                                         max_months=max(r.max_months for r in known),
                                         life=any(r.life for r in known), death=any(r.death for r in known)))
    life, death = any(r.life for r in per_charge), any(r.death for r in per_charge)
    if len(per_charge) == 1:
        return Ceiling(per_charge[0].max_months, life, death, MAXIMUM)
    total = sum(r.max_months for r in per_charge)
    cap = COMBINED_CAP_LONG if total >= LONG_SUM else COMBINED_CAP
    return Ceiling(min(total, cap), life, death, COMBINED)


def range_kind(max_months: int, *, life: bool = False, death: bool = False) -> str | None:
    """"detention" (拘役) for a statutory range that provides criminal detention at most (危险驾驶, 133之一: "处拘役，并处
    罚金"), else None: its terms, six months included, are 拘役 and never 有期徒刑."""
    return DETENTION_KIND if 0 < max_months <= DETENTION[1] and not (life or death) else None


def detention_only(ranges_by_charge: dict[str, list[StatutoryRange | None]]) -> bool:
    """Whether every charge's articles provide criminal detention at most: the judgment's term is then 拘役 (for several
    such charges too: Article 69 combines 拘役 into at most a year of 拘役)."""
    known = [r for ranges in ranges_by_charge.values() for r in ranges]
    return bool(known) and all(r is not None and range_kind(r.max_months, life=r.life, death=r.death) for r in known)


def floor_for(ranges_by_charge: dict[str, list[StatutoryRange | None]]) -> int | None:
    """The least term the articles provide for these charges (the highest of the charges' minimums: a combined term is
    at least the heaviest of its parts); None when a charge's range is unknown."""
    floors = []
    for ranges in ranges_by_charge.values():
        known = [r for r in ranges if r is not None]
        if not known:
            return None
        floors.append(min(r.min_months for r in known))
    return max(floors, default=None)


# A clause of an amount-graded article: the tier it names right before its penalty ("数额巨大或者有其他严重情节的，处三年
# 以上十年以下有期徒刑"). A tier joined to a further condition ("数额巨大并且占应纳税额百分之三十以上的", "数额巨大不退还的")
# is not the amount alone, and a clause naming two tiers is not read. Nor is the tier of a named quantity other than the
# value the offence is about ("虚开的税款数额较大", "违法所得数额巨大", "销售金额…"): the largest sum the facts state is
# often the invoices' or the sales' total, not the tax or the profit.
_TIER_CLAUSE = re.compile(r"(?<!税款)(?<!所得)(?<!金额)数额(较大|巨大|特别巨大)(?=的|或者|、)")
_CLAUSES = re.compile(r"[^；。：\n]+")
# A list of circumstances sharing one penalty: "有下列情形之一的，处十年以上有期徒刑…：（一）…；（二）伪造货币数额特别巨大的；"
# (Articles 170, 263): a tier named in an item of the list takes the penalty of the list's head.
_LIST_HEAD = re.compile(r"下列情形之一的")
_LIST_ITEM = re.compile(r"^\s*[（(][一二三四五六七八九十]+[）)]")


def _clause_floors(texts: Sequence[str], named: Callable[[str], int | None]) -> list[int]:
    """The minimum of each clause of ``texts`` for which ``named`` gives the position after what it names, read from
    the penalty that follows it in the clause, or from the head of the list the clause is an item of."""
    floors = []
    for text in texts:
        head = None  # the penalty of the list the clauses are items of
        for clause in _CLAUSES.findall(text or ""):
            listed = _LIST_HEAD.search(clause)
            if listed:
                head = statutory_range(clause[listed.end():])
                continue
            if not _LIST_ITEM.match(clause):
                head = None
            end = named(clause)
            if end is None:
                continue
            found = statutory_range(clause[end:]) or head
            if found is not None:
                floors.append(found.min_months)
    return floors


def tier_floor(texts: Sequence[str], tier: str) -> int | None:
    """The least term the clauses of ``texts`` give an amount of ``tier`` (数额较大 | 数额巨大 | 数额特别巨大): the lowest
    minimum of the clauses naming that tier before their penalty; None when no clause does.

    Article 264: "数额巨大或者有其他严重情节的，处三年以上十年以下有期徒刑" → 36 for 数额巨大; Article 263's list "有下列情形之一的，
    处十年以上有期徒刑…：…（四）多次抢劫或者抢劫数额巨大的" → 120. The lowest of several clauses, so a paragraph for special
    offenders (Article 171's bank staff) never raises an ordinary offender's term."""
    def named(clause: str) -> int | None:
        tiers = _TIER_CLAUSE.findall(clause)
        return _TIER_CLAUSE.search(clause).end() if len(tiers) == 1 and "数额" + tiers[0] == tier else None

    return min(_clause_floors(texts, named), default=None)


# The harms a clause may name before its penalty, by the lexicon's label: "犯前款罪，致人重伤的，处三年以上十年以下有期徒刑"
# (234), "（五）抢劫致人重伤、死亡的" under 263's "有下列情形之一的，处十年以上有期徒刑…". Serious injury only: out of fold
# on the training corpus the terms its floor raised reached it in 39 of 47 cases, those a death's raised in 20 of 36
# (the lexicon's "死亡" is any death the facts tell), and a floor the judgments do not bear out is not the law's
# (docs/RESULTS.md, twenty-seventh round).
HARMS = {"致人重伤": "重伤"}
_LIGHTER = re.compile(r"情节较轻的")


def harm_floor(texts: Sequence[str], harms: Sequence[str]) -> tuple[int, str] | None:
    """(months, harm): the least term the clauses of ``texts`` give the gravest of the ``harms`` the facts show
    (labels of ``HARMS``), and that harm; None when no clause names one. Per harm, the lowest minimum of the clauses
    naming it before their penalty, or of a clause for a lighter case ("情节较轻的"), so a clause never sets a floor its
    article lowers: 234 → 36 months for 致人重伤; 133's "致人重伤、死亡…的，处三年以下有期徒刑或者拘役" → 1 month."""
    lighter = _clause_floors(texts, lambda clause: m.end() if (m := _LIGHTER.search(clause)) else None)
    best = None
    for harm in harms:
        word = HARMS.get(harm)
        if word is None:
            continue
        floors = _clause_floors(texts, lambda clause: i + len(word) if (i := clause.find(word)) >= 0 else None)
        if floors and (best is None or min(floors + lighter) > best[0]):
            best = (min(floors + lighter), harm)
    return best


# The weight of heroin or methamphetamine (冰毒) the facts state right after naming it ("查获甲基苯丙胺净重52.3克"), in
# grams, and the clauses of Articles 347 and 348 grading it ("海洛因或者甲基苯丙胺十克以上不满五十克…的，处七年以上有期徒刑";
# a clause going on from one that names the drugs may give the weights alone: "…；十克以上不满五十克的，处…"). Opium and
# the other drugs have other weights, set by interpretations: not read.
HEROIN_OR_METH = re.compile(r"(?:海洛因|甲基苯丙胺|冰毒)[^。；，]{0,20}?(\d+(?:\.\d+)?)\s*(千克|公斤|克)")
_GRADED_DRUGS = "海洛因或者甲基苯丙胺"
_WEIGHT_CLAUSE = re.compile(rf"({_GRADED_DRUGS}|鸦片)?{_N}(千克|克)以上(?:不满{_N}(千克|克))?")
_OTHER_DRUG = re.compile(r"鸦片|大麻|可卡因|吗啡|其他毒品")


# A sentence telling of a seizure or a test: the weights it states are established ones (Article 357: the quantity
# verified), not one a purchase narrated elsewhere names ("从一名陌生男子手中…购买了冰毒10克" in a sale where 1.23 grams
# were seized and tested). The sentence may also state the quantity sold ("出售甲基苯丙胺约30克，…当场查获甲基苯丙胺
# 28.6克"), which counts as well. Chosen on the training corpus out of fold and the development split (docs/RESULTS.md,
# twenty-seventh round): the seizure's own clause alone raised 16 terms there, the sentence 19, all borne out.
SEIZED_OR_TESTED = re.compile(r"鉴定|检验|检出|净重|称量|经称|查获|扣押|缴获|搜出|起获")


def drug_weight(facts: str) -> dict | None:
    """{"grams", "text"}: the largest weight of heroin or methamphetamine (``HEROIN_OR_METH``) a sentence telling of a
    seizure or a test states (``SEIZED_OR_TESTED``), and its words; None when none does. The largest, not their sum: the
    facts may state one seizure twice."""
    found = [(float(m[1]) * (1 if m[2] == "克" else 1000), m.group()) for sentence in SENTENCE_RE.finditer(facts)
             if SEIZED_OR_TESTED.search(sentence.group()) for m in HEROIN_OR_METH.finditer(sentence.group())]
    if not found:
        return None
    grams, text = max(found, key=lambda f: f[0])
    return {"grams": int(grams) if grams == int(grams) else grams, "text": text}


def weight_floor(texts: Sequence[str], grams: float) -> int | None:
    """The least term the clauses of ``texts`` give ``grams`` of heroin or methamphetamine: the lowest minimum of
    the clauses whose weights for them hold the weight; None when no clause grades these drugs by weight. Article
    347: 50 grams or more → 180 months (a list's head: "有下列情形之一的，处十五年有期徒刑…"); 10 to 50 → 84; Article 348:
    50 or more → 84."""
    def grams_of(number: str, unit: str) -> float:
        return chinese_to_int(number) * (1000 if unit == "千克" else 1)

    def named(clause: str) -> int | None:
        for m in _WEIGHT_CLAUSE.finditer(clause):
            if m[1] == "鸦片" or not m[1] and _OTHER_DRUG.search(clause[:m.start()]):
                continue  # the weights of another drug
            low, high = grams_of(m[2], m[3]), grams_of(m[4], m[5]) if m[4] else math.inf
            if low <= grams < high:
                return m.end()
        return None

    if not any(_GRADED_DRUGS in (text or "") for text in texts):
        return None
    return min(_clause_floors(texts, named), default=None)


# The circumstances of the lexicon on which the law allows a sentence below the statutory range (减轻处罚): attempt
# (Article 23), accessory (27), surrender (67), meritorious service (68), a minor (17). Without one, a term below the
# range is raised to its minimum. Confession alone (坦白, 如实供述), compensation and forgiveness lighten a sentence
# within the range (从轻), not below it.
# The grounds the lexicon does not name: discontinuance (Article 24), preparation (22), excessive defence (20) or
# necessity (21), a coerced accomplice (28). The term model does not read them (they are in 17 of the 13,110
# training facts); the term basis shows them, so a term below the range with one of them is not raised.
OTHER_GROUNDS = (
    ("犯罪中止", re.compile(r"犯罪中止|中止犯罪|自动中止|自动放弃(?:犯罪|实施|继续)")),
    ("犯罪预备", re.compile(r"犯罪预备")),
    ("防卫过当", re.compile(r"防卫过当")),
    ("避险过当", re.compile(r"避险过当")),
    ("胁从犯", re.compile(r"胁从犯|系胁从")),
)
REDUCTION_GROUNDS = ("未遂", "从犯", "自首", "立功", "未成年人", *(label for label, _ in OTHER_GROUNDS))


def reduction_shown(basis: Mapping) -> bool:
    """Whether a term basis shows a ground for a sentence below the statutory range."""
    return any(c.get("label") in REDUCTION_GROUNDS for c in basis.get("circumstances") or [])


def raise_term(term: Term, floor: int | None, *, tier: str = "", harm: str = "", grams: float | None = None,
               remaining: bool = False) -> tuple[Term, str, dict]:
    """``term`` raised to ``floor`` months when a fixed term is below it; the note and the reason as ``cap_term``'s.
    ``tier``: the amount tier whose clause sets the floor (``tier_floor``), ``harm`` the harm whose clause does
    (``harm_floor``), ``grams`` the drug weight whose clause does (``weight_floor``), none of them for the articles'
    minimum; ``remaining``: the floor is the remaining sentence the facts state (``remaining_sentence``)."""
    if floor is None or term.life or term.death or term.months >= floor:
        return term, "", {}
    values = {"months": floor, "predicted": term.months, **({"tier": tier} if tier else {}),
              **({"harm": harm} if harm else {}), **({"grams": grams} if grams else {}),
              **({"basis": "remaining"} if remaining else {})}
    if remaining:
        return (Term(months=floor), f"term raised to {floor} months (the remaining sentence the facts state, combined "
                                    f"with the new term: Articles 69 and 71; predicted {term.months})",
                reasons.why(reasons.JUDGMENT_TERM_RAISED, **values))
    minimum = (f"the minimum for an amount of {tier}" if tier else f"the minimum for the harm {harm}" if harm
               else f"the minimum for {grams:g} grams of heroin or methamphetamine" if grams
               else "the statutory minimum")
    return (Term(months=floor),
            f"term raised to {floor} months ({minimum}, no ground for a lighter sentence shown; "
            f"predicted {term.months})",
            reasons.why(reasons.JUDGMENT_TERM_RAISED, **values))


# What remained of the sentence being served, where the facts state it ("在逃时余刑尚有十四年十个月十九天", "余刑9年2个月",
# "未执行刑期为二年"): a new offence's term is combined with it (Articles 69 and 71), so the term is at least that much.
REMAINING_SENTENCE = re.compile(rf"(?:余刑|剩余刑期|尚余刑期|余下刑期|未执行(?:完毕)?的?刑期)[^。，；{NUMERAL_CHARS}]{{0,6}}"
                                rf"(?:([{NUMERAL_CHARS}]+)年)?(?:([{NUMERAL_CHARS}]+)个?月)?")


def remaining_sentence(facts: str) -> int | None:
    """The months the facts state remained of the sentence the defendant was serving (days left out); None when they
    state none."""
    for match in REMAINING_SENTENCE.finditer(facts):
        years = _months(match[1], "年") if match[1] else 0
        months = _months(match[2], "月") if match[2] else 0
        if (match[1] or match[2]) and years is not None and months is not None:
            return years + months
    return None


def with_remaining_sentence(ceiling: Ceiling) -> Ceiling:
    """The ceiling of a term for an offence committed while serving a sentence: the court combines the new term with
    what remained of the old one (Article 71, by Article 69's rule), which the facts seldom state, so the articles'
    maximum no longer bounds it; Article 69's highest cap does."""
    return Ceiling(max(ceiling.months, COMBINED_CAP_LONG), ceiling.life, ceiling.death, REMAINING)


def cap_term(term: Term, ceiling: Ceiling) -> tuple[Term, str, dict]:
    """``term`` brought within ``ceiling``; the note says what changed in English ("" when nothing did), the
    reason says it as a code and its values (worker/agents/reasons.py; {} when nothing changed)."""
    basis = {COMBINED: "combined", REMAINING: "remaining"}.get(ceiling.basis, "maximum")
    if term.death and not ceiling.death:
        if ceiling.life:
            return (Term(life=True), "death is not provided by the verified articles; life imprisonment instead",
                    reasons.why(reasons.JUDGMENT_DEATH_NOT_PROVIDED, life=True))
        return (Term(months=ceiling.months),
                f"death is not provided by the verified articles; {ceiling.months} months ({ceiling.basis})",
                reasons.why(reasons.JUDGMENT_DEATH_NOT_PROVIDED, life=False, months=ceiling.months, basis=basis))
    if term.life and not term.death and not ceiling.life:
        return (Term(months=ceiling.months), "life imprisonment is not provided by the verified articles; "
                f"{ceiling.months} months ({ceiling.basis})",
                reasons.why(reasons.JUDGMENT_LIFE_NOT_PROVIDED, months=ceiling.months, basis=basis))
    if not (term.life or term.death) and term.months > ceiling.months:
        return (Term(months=ceiling.months),
                f"term capped at {ceiling.months} months ({ceiling.basis}; predicted {term.months})",
                reasons.why(reasons.JUDGMENT_TERM_CAPPED, months=ceiling.months, predicted=term.months, basis=basis))
    return term, "", {}


# --- what the term model reads ----------------------------------------------------------------------

CHARGE_TOKEN = "@罪名:"
FEATURE_TOKEN = "@情节:"


def term_inputs(tokens: list[str], charges: list[str], features: list[str]) -> list[str]:
    """The term model's input: the facts' tokens, one marker per charge (a charge label of the charge
    classifier) and one per ontology feature of the facts (the sentencing circumstances the lexicon finds:
    自首, 坦白, 累犯, 从犯, 未遂, 赔偿, 谅解, amount and drug-weight buckets, injury degree …).

    The markers are terms of their own (tokens never contain "@"), so one linear model learns each
    charge's level and each circumstance's effect beside the words of the facts. Training gives the gold
    charges, a judgment the charges it decided: a what-if that strikes a charge changes the term.
    """
    return [*tokens, *(CHARGE_TOKEN + c for c in sorted(set(charges))), *(FEATURE_TOKEN + f for f in sorted(set(features)))]


# --- what the term model's adjustment reads ----------------------------------------------------------

# The circumstances of the lexicon (worker/agents/features.py) that move a sentence.
CIRCUMSTANCES = ("累犯", "前科", "毒品再犯", "自首", "坦白", "如实供述", "认罪认罚", "立功", "从犯", "主犯", "共同犯罪",
                 "未遂", "赔偿", "取得谅解", "退赃", "多次", "致人死亡", "致人重伤", "致人轻伤", "未成年人")
# An offence committed while serving a sentence (escape, a new crime in prison, during probation or parole): the
# court combines the new term with what remained of the old one (Articles 69-71, 77, 86), so the term a record
# states is the combined one. In the training cases (single defendant, with a term) such facts had a median term
# of 58.5 months against 12; the words alone did not carry it (docs/RESULTS.md, tenth round).
SERVING = re.compile(r"服刑期间|在.{0,12}?(?:监狱|看守所|劳改队|劳改支队).{0,6}?服刑|服刑的|刑罚执行完毕以前|刑罚执行期间"
                     r"|缓刑考验期|假释考验期|尚有.{0,8}?未执行|余刑")
SERVING_LABEL = "服刑期间犯罪"
SENTENCING_FEATURES = ("amount_log", "drug_log", "amount_tier", "range_min", "range_max", "range_life", "charges",
                       "facts_length", *(f"has:{c}" for c in CIRCUMSTANCES), "serving")


def sentencing_features(facts: str, *, charges: int, ranges: list[StatutoryRange | None],
                        standards: dict[str, Standard]) -> dict[str, float]:
    """The dense facts a sentence depends on, beside the words: the largest sum and drug weight the facts state
    (log), the amount's tier against the charges' standards (worker/agents/stages/auditor/amounts.py; -1 unknown, 0 below 数额较大,
    1–3 数额较大 … 数额特别巨大), the statutory range of the charges' articles (months; -1 unknown), how many charges,
    the length of the facts, each sentencing circumstance the lexicon finds, and whether the offence was committed
    while serving a sentence (``SERVING``).

    Training computes them from a case's gold charges, a judgment from the charges it decided and their verified
    articles: one function, so both read the same."""
    found = {label for _, label in extract_features(facts).labels()}
    amount = largest_amount(facts)
    grams = drug_grams(facts)
    if amount is None or not standards:
        tier = -1.0
    else:
        tier = float(max((TIERS.index(t) + 1 for t, s in standards.items() if amount.yuan >= s.yuan), default=0))
    known = [r for r in ranges if r is not None]
    row = {"amount_log": math.log1p(amount.yuan) if amount else -1.0, "drug_log": math.log1p(max(grams)) if grams else -1.0,
           "amount_tier": tier, "range_min": float(min((r.min_months for r in known), default=-1)),
           "range_max": float(max((r.max_months for r in known), default=-1)),
           "range_life": float(any(r.life or r.death for r in known)), "charges": float(charges),
           "facts_length": float(len(facts)), "serving": float(bool(SERVING.search(facts)))}
    row.update({f"has:{c}": float(c in found) for c in CIRCUMSTANCES})
    return row


# The provision of the Criminal Law that provides for each circumstance, for the reviewer (the numbering of the 1997
# law, which its amendments kept): surrender (67; confession is its third paragraph), recidivism (65; a drug
# recidivist, 356), meritorious service (68), the roles in a joint offence (25-28), attempt, discontinuance and
# preparation (22-24), a minor (17), excessive defence and necessity (20, 21), a crime while serving a sentence
# (71). Compensation, forgiveness, a plea of guilt and the like rest on interpretations and procedure law: none.
PROVIDED_BY = {"自首": 67, "坦白": 67, "如实供述": 67, "累犯": 65, "毒品再犯": 356, "立功": 68, "共同犯罪": 25, "主犯": 26,
               "从犯": 27, "胁从犯": 28, "未遂": 23, "犯罪中止": 24, "犯罪预备": 22, "未成年人": 17, "防卫过当": 20,
               "避险过当": 21, SERVING_LABEL: 71}


def circumstances_shown(facts: str) -> list[dict]:
    """The sentencing circumstances (CIRCUMSTANCES) the lexicon finds in ``facts``, and an offence committed while
    serving a sentence (``SERVING``), the ones the term model reads, then the grounds to go below the range that it
    does not read (``OTHER_GROUNDS``, marked ``ground_only``), each with the sentence that shows it ("" for a label
    found by counting, such as 多次), and the article that provides for it (``PROVIDED_BY``) where there is one."""
    found = {label for _, label in extract_features(facts).labels()}
    shown = []
    for label in CIRCUMSTANCES:
        if label in found:
            span = where(facts, label)
            shown.append({"label": label, "quote": _sentence_at(facts, span[0]) if span else ""})
    serving = SERVING.search(facts)
    if serving:
        shown.append({"label": SERVING_LABEL, "quote": _sentence_at(facts, serving.start())})
    for label, pattern in OTHER_GROUNDS:  # not read by the model: a ground for going below the range only
        match = pattern.search(facts)
        if match:
            shown.append({"label": label, "quote": _sentence_at(facts, match.start()), "ground_only": True})
    for row in shown:
        if row["label"] in PROVIDED_BY:
            row["article"] = article_label(PROVIDED_BY[row["label"]])
    return shown


def serving_shown(basis: Mapping) -> bool:
    """Whether a term basis shows the offence committed while serving a sentence."""
    return any(c.get("label") == SERVING_LABEL for c in basis.get("circumstances") or [])


def _sentence_at(text: str, position: int) -> str:
    for match in SENTENCE_RE.finditer(text):
        if match.start() <= position < match.end():
            return match.group().strip()
    return ""


def term_row(term: Term) -> dict:
    """A term as a term basis stores it."""
    return {"months": int(term.months), "life": bool(term.life), "death": bool(term.death),
            **({"kind": term.kind} if term.kind else {})}


def term_basis(facts: str, articles: Sequence[tuple[str, str, str]], standards: Mapping[str, Standard], *,
               model: Term | None, precedent_months: Sequence[float], share: float, term: Term | None,
               source: str = "statistical", severe: Mapping[str, Any] | None = None) -> dict:
    """What a judgment's term stands on, for the reviewer: the statutory range of each cited article that
    defines a charge (``articles`` as (key, label, text)), the largest sum the facts state against the amount
    standards of those articles, the sentencing circumstances the facts show, the term model's estimate, and
    the verified precedents' median term with the weight it had (``share``; 1 when no model estimated).
    ``source``: who set the term ("statistical": the term model and the precedents; "llm": the language model,
    no precedents' median). ``severe``: the chance of life imprisonment or death the term model read and its fixed
    term's own estimate, when that chance moved its answer (kept as "severe"). Empty when there is no term. The
    verification stage adds "capped" (the term at the articles' maximum) when the term was above it, or "raised" (at
    their minimum) when it was below it without a ground for a lighter sentence."""
    if term is None:
        return {}
    ranges = []
    for key, label, text in articles:
        found = statutory_range(text)
        if found is not None:
            ranges.append({"key": key, "label": label, "min_months": found.min_months, "max_months": found.max_months,
                           "life": found.life, "death": found.death})
    amount = largest_amount(facts)
    amount_row = None
    if amount is not None and standards:
        reached = [tier for tier in TIERS if tier in standards and amount.yuan >= standards[tier].yuan]
        first = min(standards.values(), key=lambda s: s.yuan)
        tier = reached[-1] if reached else first.tier
        everywhere = [t for t in reached if amount.yuan >= standards[t].reached_everywhere]
        amount_row = {"text": amount.text, "yuan": amount.yuan, "tier": tier, "reached": bool(reached),
                      "standard": yuan_text(standards[tier].yuan)}
        if everywhere:  # the tier it reaches in every region, which may bind the term (tier_floor)
            amount_row.update(everywhere=everywhere[-1],
                              everywhere_standard=yuan_text(standards[everywhere[-1]].reached_everywhere))
    basis: dict = {"source": source, "ranges": ranges, "amount": amount_row, "circumstances": circumstances_shown(facts),
                   "model": term_row(model) if model is not None else None, "precedents": None, "term": term_row(term)}
    if severe:
        basis["severe"] = dict(severe)
    drug = drug_weight(facts)
    if drug:  # the weight of heroin or methamphetamine, which may bind the term (weight_floor)
        basis["drug"] = drug
    remaining = remaining_sentence(facts)
    if remaining:  # months that remained of the sentence being served: the term is combined with them
        basis["remaining"] = remaining
    pulled = model is None or not (model.life or model.death)
    if precedent_months and pulled:
        median = statistics.median(precedent_months)
        basis["precedents"] = {"n": len(precedent_months), "median": int(median) if median == int(median) else median,
                               "share": share if model is not None else 1.0}
    return basis
