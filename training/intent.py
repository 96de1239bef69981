"""Weak labels for the intent classifier of articles and queries (definition, applicability,
consequence, procedure, other); the model itself is a calibrated LinearTextModel
(training/text_models.fit_multilabel), so a text can carry several intents.

Labels come from where a sentence sits in the law, not from annotators:

  general part (articles <= 101), by chapter and section
    chapter 1, articles 6-12 (jurisdiction, retroactivity)      procedure
    chapter 1, articles 1-5 (aims and principles)               other
    chapter 2 (crime, attempt, complicity, units)               definition
    chapter 3 and chapter 4 sections 1-7 (penalties, their use) consequence
    chapter 4 section 8 (limitation)                            procedure
    chapter 5 (other provisions: what the terms mean)           definition
    a topic about execution, approval or computation of terms   procedure (added)
  specific part, per sentence
    a penalty ("处……有期徒刑/拘役/管制/罚金/死刑", "依照……处罚")     consequence
    "是指", "所称", "以……论"                                       definition
    "告诉的才处理", a limitation or jurisdiction rule                procedure
    none of these                                                   other
  facts of precedents (train split; up to ``max_fact_sentences``)   applicability

The evaluator is training/text_models.MultilabelEvaluator on a held-out share of these
sentences (seeded hash of the sentence id), so its figures measure agreement with the weak
labels.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from worker.agents.stages.researcher.retrieval import INTENTS

_SENTENCE = re.compile(r"[^。；;！？!?\n]+[。；;！？!?]?")
_PENALTY = re.compile(r"处.{0,20}?(?:有期徒刑|拘役|管制|罚金|死刑|无期徒刑)|依照.{0,30}?(?:处罚|定罪)|并处|没收财产")
_DEFINITION = re.compile(r"是指|所称|本法所说|以.{1,12}?论")
_PROCEDURE = re.compile(r"告诉的才处理|追诉|时效|管辖|核准|诉讼")
_PROCEDURE_TOPIC = re.compile(r"执行|核准|程序|计算|缴纳|期满")


def general_part_intents(number: int, chapter: str, section: str, topic: str) -> set[str]:
    if chapter.startswith("第一章"):
        found = {"procedure"} if 6 <= number <= 12 else {"other"}
    elif chapter.startswith("第二章") or chapter.startswith("第五章"):
        found = {"definition"}
    elif chapter.startswith("第三章"):
        found = {"consequence"}
    elif chapter.startswith("第四章"):
        found = {"procedure"} if section.startswith("第八节") else {"consequence"}
    else:
        found = {"other"}
    if _PROCEDURE_TOPIC.search(topic or ""):
        found.add("procedure")
    return found


def specific_part_intents(sentence: str) -> set[str]:
    found = set()
    if _PENALTY.search(sentence):
        found.add("consequence")
    if _DEFINITION.search(sentence):
        found.add("definition")
    if _PROCEDURE.search(sentence):
        found.add("procedure")
    return found or {"other"}


def sentences(text: str, min_chars: int = 6) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text or "") if len(s.strip()) >= min_chars]


def intent_examples(statutes: Sequence[Mapping[str, Any]], cases: Sequence[Mapping[str, Any]], *,
                    max_fact_sentences: int = 3000, seed: int = 13) -> list[tuple[str, str, set[str]]]:
    """[(example id, text, intents)] from the statutes' structure and the precedents' facts."""
    out: list[tuple[str, str, set[str]]] = []
    for s in statutes:
        if s.get("repealed"):
            continue
        key = str(s.get("key") or s["number"])
        parts = sentences(s.get("text") or "")
        for j, sentence in enumerate(parts):
            if int(s["number"]) <= 101:
                labels = general_part_intents(int(s["number"]), s.get("chapter") or "", s.get("section") or "",
                                              s.get("topic") or "")
            else:
                labels = specific_part_intents(sentence)
            out.append((f"art:{key}:{j}", sentence, labels))
    facts = []
    for case in cases:
        for j, sentence in enumerate(sentences(case.get("fact") or "", min_chars=12)[:4]):
            facts.append((f"fact:{case['id']}:{j}", sentence, {"applicability"}))
    # A salted order: the held-out split hashes the same ids with the bare seed, and the
    # sample must not be drawn from one side of that split.
    facts.sort(key=lambda e: hashlib.sha256(f"{seed}:intent-sample:{e[0]}".encode()).digest())
    out.extend(facts[:max_fact_sentences])
    for _, _, labels in out:
        assert labels <= set(INTENTS), labels
    return out
