"""The LLM strategy: every stage through the OpenAI-compatible client (vLLM on a
GPU host; llama.cpp for demos), with the versioned prompts and JSON schemas.

Model trouble becomes an explicit status (StageFailure): unavailable, output
that does not parse or fit the schema, budget exhausted. A checklist verdict
answers with the opening words of the supporting sentence (``span``); one whose
words are not an exact substring of the facts is not accepted as support, and
one that is found is shown with its whole sentence. The pipeline's verifier then
checks the judgment like any other.
"""

from __future__ import annotations

from worker.agents import reasons
from worker.agents.graph_types import DIMENSIONS, ChecklistEntry, Term
from worker.agents.llm import BudgetExceeded, LLMError, ModelOutputInvalid, ModelRequestRejected, ModelUnavailable
from worker.agents.llm.jsonparse import JSONParseError, parse_json_strict
from worker.agents.models.sentencing import term_basis
from worker.agents.pipeline import StageFailure
from worker.agents.ports import GraphStore
from worker.agents.prompts import PROMPT_VERSION, build_prompt, extract_citations
from worker.agents.prompts.blocks import sanitize_data
from worker.agents.prompts.passages import article_ref, interpretation_passage
from worker.agents.stages.features import CaseFeatures
from worker.agents.strategies.base import Strategy
from worker.agents.types import ArticleAudit, Audit, CaseInput, Evidence, ItemVerdict, Judgment, Research, Status


# What one batched call is budgeted at beyond its data: the system prompt, the instructions and the
# block labels (about 1,200 characters in Chinese), and the reply per checklist item or per article.
# An item's reply is {"id", "met", "why" (≤ 20 characters asked), "span" (8–15 characters of the
# facts)}: about 20 tokens when not met, 45 at most when met.
PROMPT_OVERHEAD_CHARS = 1600
ITEM_REPLY_TOKENS = 50
DECISION_REPLY_TOKENS = 80
# Where a sentence of the facts ends; a sentence longer than SENTENCE_MAX_CHARS is cut at its clauses.
_SENTENCE_ENDS = "。！？；!?;\n"
_CLAUSE_ENDS = "，,：:"
SENTENCE_MAX_CHARS = 240


def _article_record(article: ArticleAudit) -> dict:
    return {"key": article.key, "label": article.label, "text": article.text}


def _interpretations(article: ArticleAudit) -> list[tuple[int, str]]:
    """The interpretations shown with an article (its first three), with their ids."""
    return list(zip(article.interpretations, article.interpretation_texts))


def _shown_interpretations(article: ArticleAudit) -> list[tuple[int, str]]:
    """As the prompt shows them: each cut to its passage about the article, one about other articles
    left out (worker/agents/prompts/passages.py)."""
    ref = article_ref(article.key)
    passages = [(pk, interpretation_passage(text, [ref] if ref else [])) for pk, text in _interpretations(article)]
    return [(pk, text) for pk, text in passages if text is not None]


_VERDICT_KEYS = {"id", "met", "why", "span"}
# Replies recorded before lextrace-prompts/2026-12.3 (stored bundles, read again by a replay).
_LEGACY_VERDICT_KEYS = {"verdict": "met", "reasoning": "why", "fact_span": "span"}


def _verdict(answer: dict) -> dict:
    return answer if "met" in answer else {_LEGACY_VERDICT_KEYS.get(k, k): v for k, v in answer.items()}


def _sentence_bounds(facts: str, start: int, end: int) -> tuple[int, int]:
    """The whole sentence(s) of ``facts`` around the quoted [start, end): from the end of the sentence
    before to the end of the last one quoted; a sentence too long to show is cut at its clauses."""
    def around(stops: str) -> tuple[int, int]:
        first = max(facts.rfind(c, 0, start) for c in stops) + 1
        if facts[end - 1] in stops:
            last = end
        else:
            ends = [i for c in stops if (i := facts.find(c, end)) >= 0]
            last = min(ends) + 1 if ends else len(facts)
        return first, last

    first, last = around(_SENTENCE_ENDS)
    if last - first > SENTENCE_MAX_CHARS:
        first, last = around(_SENTENCE_ENDS + _CLAUSE_ENDS)
    while first < start and facts[first].isspace():
        first += 1
    while last > end and facts[last - 1].isspace():
        last -= 1
    return first, last


def _partial_verdicts(error, offered: set[int]) -> list[dict]:
    """The well-formed verdicts of offered items in a reply refused as a whole (it left items out)."""
    try:
        value = parse_json_strict(getattr(error, "raw_text", "") or "", allow_fence=True)
    except JSONParseError:
        return []
    answers = value.get("items") if isinstance(value, dict) else None
    if not isinstance(answers, list):
        return []
    return [a for a in answers if isinstance(a, dict) and set(a) == _VERDICT_KEYS and type(a["id"]) is int
            and a["id"] in offered and isinstance(a["met"], bool) and isinstance(a["why"], str)
            and isinstance(a["span"], str)]


def _data_chars(article: ArticleAudit, items: list[ChecklistEntry], seen: set[int]) -> int:
    """What an article adds to a batched checklist prompt: label, text, items as {"<id>": "<question>"},
    and its interpretation passages (those already in the prompt are not repeated)."""
    texts = [t for pk, t in _shown_interpretations(article) if pk not in seen]
    return (len(article.label) + len(article.text) + sum(len(i.question) + 12 for i in items)
            + sum(len(t) + 16 for t in texts) + 64)


def _batch_articles(batch) -> list[dict]:
    return [{**_article_record(a), "interpretations": [pk for pk, _ in _interpretations(a)],
             "items": [{"id": i.pk, "question": i.question} for i in items]} for a, items in batch]


def _batch_interpretations(articles) -> list[dict]:
    """Each interpretation once, however many of the batch's articles it explains."""
    out: dict[int, dict] = {}
    for article in articles:
        for pk, text in _interpretations(article):
            out.setdefault(pk, {"id": pk, "text": text})
    return list(out.values())


class LLMStrategy(Strategy):
    name = "llm"

    CHECKLIST_MODES = ("article", "item")

    def __init__(self, client, *, lang: str = "zh", checklist_mode: str = "article", keyword_expansion: bool = False,
                 research_choices: bool = False, context_tokens: int = 4096):
        """``checklist_mode``: "article" decides all items of an article in one call; "item" makes one
        call per item, as the paper's Auditor does (more calls, shorter prompts). ``keyword_expansion``:
        one more call per defendant, IRAC keywords for the sparse article search (the pipeline calls
        ``expand_keywords`` when it is not None). ``research_choices``: two more calls per defendant, the
        model picks the community among the best scored ones and keeps the most similar precedents of the
        semantic path (the pipeline calls ``pick_community`` / ``select_cases`` when they are not None).
        ``context_tokens``: the server's context window; in "article" mode the checklists of several
        candidate articles share one call as long as the prompt and the expected reply fit in it and
        in the client's ``max_tokens``."""
        if checklist_mode not in self.CHECKLIST_MODES:
            raise ValueError(f"checklist_mode must be one of {self.CHECKLIST_MODES}, got {checklist_mode!r}")
        self.client = client
        self.lang = lang
        self.checklist_mode = checklist_mode
        self.context_tokens = int(context_tokens)
        self.records: list[dict] = []
        self.expand_keywords = self._expand_keywords if keyword_expansion else None
        self.pick_community = self._pick_community if research_choices else None
        self.select_cases = self._select_cases if research_choices else None

    def versions(self) -> dict[str, str]:
        return {"strategy": "llm/1", "model": self.client.model, "prompts": PROMPT_VERSION, "checklist": self.checklist_mode,
                "sampling": ",".join(f"{k}={v}" for k, v in sorted(self.client.sampling_params().items()))}

    def usage(self) -> dict[str, tuple[int, int, int]]:
        return {stage: (int(u["calls"]), int(u["prompt_tokens"]), int(u["completion_tokens"]))
                for stage, u in self.client.usage.snapshot().items()}

    def _call(self, stage: str, *, facts: str, defendant: str = "", **data) -> dict:
        prompt = build_prompt(stage, self.lang, facts=facts, defendant=defendant, **data)
        try:
            result = self.client.complete_json(prompt.messages, prompt.schema, name=prompt.name, stage=stage)
        except BudgetExceeded as exc:
            raise StageFailure(Status.BUDGET_EXHAUSTED, stage, str(exc)) from exc
        except ModelOutputInvalid as exc:
            self.records.append({"prompt": prompt.record(), "error": str(exc), "raw": getattr(exc, "raw_text", "")})
            raise StageFailure(Status.UNPARSEABLE_OUTPUT, stage, f"the model's output was not valid: {exc}") from exc
        except (ModelUnavailable, ModelRequestRejected) as exc:
            raise StageFailure(Status.MODEL_UNAVAILABLE, stage, str(exc)) from exc
        except LLMError as exc:
            raise StageFailure(Status.MODEL_UNAVAILABLE, stage, str(exc)) from exc
        self.records.append({"prompt": prompt.record(), "result": result.record()})
        return result.value

    def _expand_keywords(self, focus: str) -> list[str]:
        """IRAC-guided keywords for the sparse article search (prompts/expansion.py). Optional: a model
        failure leaves the query unexpanded (recorded), it does not stop the run."""
        from worker.agents.prompts.expansion import (EXPANSION_PROMPT_VERSION, EXPANSION_STAGE, SCHEMA, clean_keywords,
                                                     expansion_messages, expansion_prompt_hash)

        record = {"stage": EXPANSION_STAGE, "lang": self.lang, "version": EXPANSION_PROMPT_VERSION,
                  "template_hash": expansion_prompt_hash(self.lang)}
        try:
            result = self.client.complete_json(expansion_messages(self.lang, facts=focus), SCHEMA, name=EXPANSION_STAGE,
                                               stage=EXPANSION_STAGE)
        except LLMError as exc:
            self.records.append({"prompt": record, "error": str(exc), "raw": getattr(exc, "raw_text", "")})
            return []
        self.records.append({"prompt": record, "result": result.record()})
        return clean_keywords(list(result.value.get("keywords") or []), focus)

    def _optional_call(self, stage: str, *, facts: str, **data) -> dict | None:
        """A Researcher choice: a model failure is recorded and the statistical ranking decides instead.
        An exhausted budget still stops the run."""
        try:
            return self._call(stage, facts=facts, **data)
        except StageFailure as failure:
            if failure.status == Status.BUDGET_EXHAUSTED:
                raise
            return None

    def _pick_community(self, focus: str, communities: list) -> int | None:
        records = [{"id": c.pk, "summary": c.summary, "top_charges": list(c.top_charges)} for c in communities]
        value = self._optional_call("pick_community", facts=focus, communities=records)
        return int(value["community"]) if value else None

    def _select_cases(self, focus: str, cases: list) -> list[int] | None:
        records = [{"id": c.pk, "charges": list(c.charges), "articles": [str(a) for a in c.article_pks],
                    "facts": "；".join("、".join(v) for v in c.features.values() if v)[:300]} for c in cases]
        value = self._optional_call("rerank_cases", facts=focus, candidates=records)
        return [int(pk) for pk in value["selected"]] if value is not None else None

    # -- stages ----------------------------------------------------------------
    def focus(self, case: CaseInput, defendant: str) -> str:
        if len(case.defendants) < 2:
            return case.facts
        return self._call("focus", facts=case.facts, defendant=defendant, defendants=list(case.defendants))["facts"]

    def features(self, focus: str) -> tuple[dict[str, list[str]], str]:
        value = self._call("features", facts=focus)
        found = CaseFeatures(**{d: tuple(dict.fromkeys(x.strip() for x in value.get(d, []) if x.strip())) for d in DIMENSIONS})
        return found.as_dict(), found.text()

    def prejudge(self, focus: str, k: int) -> list[tuple[str, float]]:
        value = self._call("predict_charges", facts=focus)
        charges = [c if c.endswith("罪") else c + "罪" for c in value["charges"]]
        # The model gives no probability: every pre-judged charge counts fully.
        return [(c, 1.0) for c in list(dict.fromkeys(charges))[:k]]

    def verify_checklists(self, focus: str, pairs: list[tuple[ArticleAudit, list[ChecklistEntry]]]) -> None:
        """In "article" mode the checklists of several articles go in one call (as many as fit); an item
        the reply leaves out is asked on its own, and a batch whose reply does not parse is split."""
        if self.checklist_mode == "item":
            super().verify_checklists(focus, pairs)
            return
        for article, items in pairs:
            if not items:
                article.items = []
        for batch in self._batches(focus, [(a, items) for a, items in pairs if items]):
            self._verify_batch(focus, batch)

    def verify_items(self, focus: str, article: ArticleAudit, items: list[ChecklistEntry]) -> list[ItemVerdict]:
        if not items:
            return []
        if self.checklist_mode == "item":
            return self._verdicts(focus, items, self._answers_per_item(focus, article, items))
        try:
            value = self._call("checklist_article", facts=focus, article=_article_record(article),
                               interpretations=article.interpretation_texts,
                               items=[{"id": i.pk, "question": i.question} for i in items])
            answers = {a["id"]: a for a in value["items"]}
        except StageFailure as failure:
            if failure.status != Status.UNPARSEABLE_OUTPUT or len(items) < 2:
                raise
            # One reply for every item can outgrow max_tokens on a small model (cut off, unparseable):
            # ask item by item for this article; a failure there is final. Both are recorded.
            answers = self._answers_per_item(focus, article, items)
        return self._verdicts(focus, items, answers)

    def _budget(self, focus: str) -> tuple[int, int]:
        """Room for the data of one batched call, in characters of prompt and in checklist items.

        One token per character is assumed for the prompt (Chinese runs 1.3–1.5 characters per token
        in the Qwen family's tokenizers, so this errs on the safe side); the reply is budgeted at
        ITEM_REPLY_TOKENS per item within the client's ``max_tokens``."""
        reply = self._reply_tokens()
        fixed = len(focus) + PROMPT_OVERHEAD_CHARS
        return max(0, self.context_tokens - reply - fixed), max(1, reply // ITEM_REPLY_TOKENS)

    def _reply_tokens(self) -> int:
        return int(getattr(self.client, "max_tokens", 1024))

    def _batches(self, focus: str, pairs: list[tuple[ArticleAudit, list[ChecklistEntry]]]):
        """Consecutive groups of articles whose data and replies fit one call (an article too big for
        a shared call goes alone, as before)."""
        room, max_items = self._budget(focus)
        batch: list = []
        size = n_items = 0
        seen: set[int] = set()
        for article, items in pairs:
            cost = _data_chars(article, items, seen)
            if batch and (size + cost > room or n_items + len(items) > max_items):
                yield batch
                batch, size, n_items, seen = [], 0, 0, set()
                cost = _data_chars(article, items, seen)
            batch.append((article, items))
            seen.update(pk for pk, _ in _interpretations(article))
            size += cost
            n_items += len(items)
        if batch:
            yield batch

    def _verify_batch(self, focus: str, batch: list[tuple[ArticleAudit, list[ChecklistEntry]]]) -> None:
        if len(batch) == 1:
            article, items = batch[0]
            article.items = self.verify_items(focus, article, items)
            return
        try:
            value = self._call("checklist_batch", facts=focus, articles=_batch_articles(batch),
                               interpretations=_batch_interpretations(a for a, _ in batch))
        except StageFailure as failure:
            if failure.status != Status.UNPARSEABLE_OUTPUT:
                raise
            # A reply that left items out (a server without structured output) keeps its well-formed
            # verdicts; one that is cut off or malformed is asked again in two halves.
            value = {"items": _partial_verdicts(failure.__cause__, {i.pk for _, items in batch for i in items})}
            if not value["items"]:
                half = len(batch) // 2
                self._verify_batch(focus, batch[:half])
                self._verify_batch(focus, batch[half:])
                return
        answers: dict[int, dict] = {}
        for answer in value["items"]:
            answers.setdefault(answer["id"], answer)  # an item answered twice: the first answer stands
        for article, items in batch:
            left_out = [i for i in items if i.pk not in answers]
            if left_out:
                answers.update(self._answers_per_item(focus, article, left_out))
            article.items = self._verdicts(focus, items, answers)

    def _verdicts(self, focus: str, items: list[ChecklistEntry], answers: dict[int, dict]) -> list[ItemVerdict]:
        facts = sanitize_data(focus)
        verdicts = []
        for item in items:
            answer = answers.get(item.pk)
            if answer is None:
                verdicts.append(ItemVerdict(item.pk, item.order, item.question, False, 0.0, "the model gave no verdict",
                                            why=reasons.why(reasons.ITEM_MODEL, verdict=None)))
                continue
            answer = _verdict(answer)
            quote = answer["span"].strip()
            start = facts.find(quote) if quote else -1
            satisfied = bool(answer["met"]) and start >= 0
            reasoning = answer["why"]
            if answer["met"] and start < 0:
                reasoning += "（所引事实在案情中找不到，不予采信）"
            span = _sentence_bounds(facts, start, start + len(quote)) if start >= 0 else None
            verdicts.append(ItemVerdict(item.pk, item.order, item.question, satisfied, 1.0 if satisfied else 0.0, reasoning,
                                        span=span, span_text=facts[span[0]:span[1]] if span else "",
                                        why=reasons.why(reasons.ITEM_MODEL, verdict=bool(answer["met"]),
                                                        quote_found=start >= 0)))
        return verdicts

    def _answers_per_item(self, focus: str, article: ArticleAudit, items: list[ChecklistEntry]) -> dict[int, dict]:
        return {i.pk: self._call("checklist_item", facts=focus, article=_article_record(article),
                                 interpretations=article.interpretation_texts,
                                 item={"id": i.pk, "question": i.question}) for i in items}

    def decide_articles(self, focus: str, articles: list[ArticleAudit], research: Research, graph: GraphStore,
                        on_decided) -> None:
        """The paper's Auditor decision, given each article's satisfied and failed items. An article with
        no supported item fails without a call (no element shown, nothing for the model to weigh); the
        others are decided together, as many per call as fit."""
        supported = []
        for article in articles:
            if any(i.satisfied for i in article.items):
                supported.append(article)
                continue
            article.passed, article.score = False, 0.0
            article.reason = "no checklist item is supported by the facts; not put to the model"
            article.why = reasons.why(reasons.ARTICLE_NO_ELEMENT, total=len(article.items))
            on_decided(article)
        room, _ = self._budget(focus)
        per_call = max(1, self._reply_tokens() // DECISION_REPLY_TOKENS)
        batch: list[ArticleAudit] = []
        size = 0
        for article in supported:
            cost = len(article.text) + sum(len(i.question) + 24 for i in article.items) + 400
            if batch and (size + cost > room or len(batch) >= per_call):
                self._decide_batch(focus, batch, on_decided)
                batch, size = [], 0
            batch.append(article)
            size += cost
        if batch:
            self._decide_batch(focus, batch, on_decided)

    def _decide_batch(self, focus: str, batch: list[ArticleAudit], on_decided) -> None:
        answers: dict[str, dict] = {}
        if len(batch) > 1:
            try:
                value = self._call("articles_decision", facts=focus, articles=[
                    {**_article_record(a), "interpretations": [pk for pk, _ in _interpretations(a)],
                     "satisfied": [{"id": i.item_pk, "question": i.question} for i in a.items if i.satisfied],
                     "failed": [{"id": i.item_pk, "question": i.question} for i in a.items if not i.satisfied]}
                    for a in batch], interpretations=_batch_interpretations(batch))
                for answer in value["articles"]:
                    answers.setdefault(answer["key"], answer)
            except StageFailure as failure:
                if failure.status != Status.UNPARSEABLE_OUTPUT:
                    raise
                # not parseable: each article is asked on its own below
        for article in batch:
            answer = answers.get(article.key)
            if answer is None:  # one article, or one the reply left out
                article.passed, article.score, article.reason = self.decide_article(focus, article)
            else:
                article.passed, article.score = bool(answer["applies"]), 1.0 if answer["applies"] else 0.0
                article.reason = answer["reasoning"]
            on_decided(article)

    def decide_article(self, focus: str, article: ArticleAudit) -> tuple[bool, float, str]:
        value = self._call("article_decision", facts=focus, article=_article_record(article),
                           interpretations=article.interpretation_texts,
                           satisfied=[{"id": i.item_pk, "question": i.question} for i in article.items if i.satisfied],
                           failed=[{"id": i.item_pk, "question": i.question} for i in article.items if not i.satisfied])
        return bool(value["applies"]), 1.0 if value["applies"] else 0.0, value["reasoning"]

    def adjudicate(self, focus: str, audit: Audit, research: Research, evidence: list[Evidence], graph: GraphStore) -> Judgment:
        verified = audit.verified
        value = self._call("adjudicate", facts=focus,
                           evidence=[{"kind": e.kind, "ref": e.ref, "text": e.text} for e in evidence],
                           article_keys=[a.key for a in verified],
                           charges=sorted({c for a in verified for c in a.charges}))
        _numbers, malformed = extract_citations(value["reasoning"])
        if malformed:
            return Judgment(status=Status.UNRESOLVED_CITATION, reasoning=value["reasoning"], evidence=evidence,
                            message=f"malformed citations {malformed}",
                            why=[reasons.why(reasons.JUDGMENT_MALFORMED, citations=list(malformed))])
        by_key = {a.key: a for a in verified}
        keys = list(dict.fromkeys(value["articles"]))
        term = Term(months=int(value["term"]["months"]), life=bool(value["term"]["life"]), death=bool(value["term"]["death"]))
        ranged = [by_key[k] for k in keys if k in by_key and by_key[k].charges]
        basis = term_basis(focus, [(a.key, a.label, a.text) for a in ranged], {}, model=None, precedent_months=(),
                           share=0.0, term=term, source="llm")
        return Judgment(status=Status.JUDGED, charges=list(dict.fromkeys(value["charges"])), article_keys=keys,
                        article_pks=[by_key[k].article_pk for k in keys if k in by_key], term=term,
                        reasoning=value["reasoning"], evidence=evidence, term_basis=basis)
