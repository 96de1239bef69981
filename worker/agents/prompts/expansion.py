"""IRAC-guided keyword expansion for the sparse (BM25) article path (zh, en; versioned).

LexPath expands the query of its sparse retriever with the legal vocabulary the facts
imply but do not use: the model reads the facts and answers along IRAC — the Issue
(what legal question the facts raise), the Rule (the elements an article would require),
and, for the Application, the statutory keywords whose presence in an article would make
it applicable ("秘密窃取", "数额较大", "入户"). The Conclusion is left to the Auditor and the
Adjudicator. Only ``keywords`` reach the retriever (appended to the facts); ``issue`` and
``rule`` are kept in the run's LLM records so the expansion can be audited.

One call per defendant, made only when an LLM is configured (the LLM strategy); the
statistical strategy does not expand.
"""

from __future__ import annotations

import hashlib
import json

from worker.agents.prompts import case_block, system_message

EXPANSION_PROMPT_VERSION = "lextrace-expansion/2026-12.1"
EXPANSION_STAGE = "expand_keywords"
MAX_KEYWORDS = 12
MAX_KEYWORD_CHARS = 16

SCHEMA = {
    "type": "object",
    "properties": {
        "issue": {"type": "string"},
        "rule": {"type": "string"},
        "keywords": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": MAX_KEYWORD_CHARS},
                     "maxItems": MAX_KEYWORDS},
    },
    "required": ["issue", "rule", "keywords"],
    "additionalProperties": False,
}

_INSTRUCTIONS = {
    "zh": """请按 IRAC 的前两步分析 FACTS 数据块中的案件事实，为检索刑法条文提供关键词：
- issue：一句话写出这些事实提出的法律问题（例如“秘密取得他人财物是否构成盗窃”）；
- rule：一句话写出可能适用的法条要求的构成要件；
- keywords：最多 12 个法条中会出现的法律用语（如“秘密窃取”“数额较大”“入户”“以非法占有为目的”），用于在法条中检索；不要写人名、地名、日期、具体金额，不要写罪名以外的评价，不要照抄整句事实。
不要下结论，不要写法条编号。
输出 JSON：{"issue": "……", "rule": "……", "keywords": ["……", ...]}""",
    "en": """Analyse the facts in the FACTS data block along the first two steps of IRAC to give keywords for searching the Criminal Law:
- issue: one sentence stating the legal question these facts raise (e.g. "does secretly taking another's property amount to theft");
- rule: one sentence stating the elements the possibly applicable articles require;
- keywords: at most 12 legal terms, in Chinese as the articles word them (e.g. "秘密窃取", "数额较大", "入户", "以非法占有为目的"), to search the articles with; no names, places, dates or exact amounts, no judgments beyond charge names, never whole sentences of the facts.
Draw no conclusion and name no article number.
Output JSON: {"issue": "...", "rule": "...", "keywords": ["...", ...]}""",
}


def _instructions(lang: str) -> str:
    try:
        return _INSTRUCTIONS[lang]
    except KeyError:
        raise ValueError(f"unknown prompt language {lang!r}; use one of {tuple(_INSTRUCTIONS)}") from None


def expansion_messages(lang: str, *, facts: str, defendant: str = "") -> list[dict[str, str]]:
    """System prompt, then the shared case block and the expansion instructions (one user message)."""
    return [system_message(lang),
            {"role": "user", "content": case_block(lang, facts=facts, defendant=defendant) + "\n\n" + _instructions(lang)}]


def expansion_prompt_hash(lang: str) -> str:
    blob = json.dumps({"version": EXPANSION_PROMPT_VERSION, "lang": lang, "instructions": _instructions(lang),
                       "schema": SCHEMA, "system": system_message(lang)["content"]}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def clean_keywords(keywords: list[str], facts: str) -> list[str]:
    """Distinct keywords in the model's order; whitespace removed; a keyword that is a long copy of the facts
    (more than 8 characters found verbatim) is dropped: it adds nothing the facts do not already say."""
    out: list[str] = []
    for keyword in keywords:
        keyword = "".join(str(keyword).split())
        if not keyword or keyword in out or (len(keyword) > 8 and keyword in facts):
            continue
        out.append(keyword)
    return out[:MAX_KEYWORDS]
