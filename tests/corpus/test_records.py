"""Schema validation of corpus rows: the real shared data passes, broken rows are named by field."""

import copy
from datetime import date

import pytest

from lexlib.parsing.errors import ImportValidationError
from lexlib.parsing.jsonl import read_jsonl
from lexlib.parsing.records import (
    CaseRecord,
    ChecklistRecord,
    InterpretationRecord,
    StatuteRecord,
    Term,
    detect_kind,
    validate_records,
)

STATUTE = {
    "law": "中华人民共和国刑法", "number": 266, "sub": 0, "key": "266", "label": "第二百六十六条",
    "text": "诈骗公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。", "part": "第二编 分则",
    "chapter": "第五章 侵犯财产罪", "section": None, "charges": ["诈骗罪"], "topic": None, "repealed": False,
}  # fmt: skip
INTERPRETATION = {"id": "JI-9000", "source": "示例解释", "para": "第一条", "text": "第一条 示例。", "articles": [266]}
CHECKLIST = {
    "article": 133, "sub": 1, "key": "133-1", "label": "第一百三十三条之一", "items": ["是否在道路上驾驶机动车"],
    "items_alt": None, "charges": ["危险驾驶罪"],
    "related": [{"source": "示例解释", "text": "第二条 示例。", "interpretation_id": None}],
}  # fmt: skip
CASE = {
    "id": "example-1", "source": "manual", "fact": "经审理查明，被告人甲某盗窃他人财物。", "defendants": ["甲某"],
    "charges": ["盗窃罪"], "articles": [264], "term": {"months": 6, "life": False, "death": False},
    "label_source": "gold", "origin": {"repo": "example"},
}  # fmt: skip
GOOD = {"statute": STATUTE, "interpretation": INTERPRETATION, "checklist": CHECKLIST, "case": CASE}


def problems(kind: str, raw: dict) -> list[str]:
    with pytest.raises(ImportValidationError) as info:
        validate_records(kind, [(7, raw)])
    assert {error.line for error in info.value.errors} == {7}
    return [error.reason for error in info.value.errors]


def changed(base: dict, path: str, value) -> dict:
    """A deep copy of base with the dotted path set (or deleted when value is DELETE)."""
    raw = copy.deepcopy(base)
    *parents, last = path.split(".")
    target = raw
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        last = int(last)
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return raw


DELETE = object()


@pytest.mark.parametrize(
    ("name", "kind", "count", "record_type"),
    [
        ("statutes.jsonl", "statute", 591, StatuteRecord),
        ("interpretations.jsonl", "interpretation", 657, InterpretationRecord),
        ("checklists.jsonl", "checklist", 487, ChecklistRecord),
        ("cases.jsonl", "case", 13110, CaseRecord),
        ("eval/cail_dev.jsonl", "case", 568, CaseRecord),
    ],
)
def test_it_accepts_every_line_of_the_shared_data(shared_data, name, kind, count, record_type):
    rows = read_jsonl((shared_data / name).read_bytes())
    assert {detect_kind(raw) for _, raw in rows} == {kind}
    records = validate_records(kind, rows)
    assert len(records) == count
    assert all(isinstance(record, record_type) for record in records)


def test_it_turns_a_statute_row_into_a_typed_record():
    [record] = validate_records("statute", [(1, STATUTE)])
    assert record == StatuteRecord(
        number=266, sub=0, key="266", label="第二百六十六条", text=STATUTE["text"], part="第二编 分则",
        chapter="第五章 侵犯财产罪", charges=("诈骗罪",),
    )  # fmt: skip


def test_it_derives_key_label_and_law_when_a_statute_omits_them():
    raw = {"number": 133, "sub": 1, "text": "在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金。"}
    [record] = validate_records("statute", [(1, raw)])
    assert (record.law, record.key, record.label) == ("中华人民共和国刑法", "133-1", "第一百三十三条之一")


def test_it_reads_validity_dates_and_the_amendment_flag():
    raw = dict(STATUTE, valid_from="2021-03-01", valid_to="2021-03-01", amendment=True, gloss_en="Fraud")
    [record] = validate_records("statute", [(1, raw)])
    assert (record.valid_from, record.valid_to, record.amendment) == (date(2021, 3, 1), date(2021, 3, 1), True)


def test_it_reads_nested_case_labels():
    raw = dict(
        CASE, term=None, fine=2000, court_level="基层",
        per_defendant=[{"name": "甲某", "charges": ["盗窃罪"], "term": {"months": 8, "life": False, "death": False,
                                                                   "kind": "有期徒刑", "suspended": True}}],
        duplicates=[{"id": "x-1", "source": "lawbench", "near": True}],
    )  # fmt: skip
    [record] = validate_records("case", [(1, raw)])
    assert record.term is None
    assert record.per_defendant[0].term == Term(months=8, life=False, death=False, kind="有期徒刑", suspended=True)
    assert record.duplicates[0].near is True


@pytest.mark.parametrize(
    ("kind", "path", "value", "expected"),
    [
        ("statute", "number", DELETE, "number: required field is missing"),
        ("statute", "number", 0, "number: must be at least 1, got 0"),
        ("statute", "number", "266", "number: must be an integer, got a string"),
        ("statute", "number", True, "number: must be an integer, got a boolean"),
        ("statute", "sub", -1, "sub: must be at least 0"),
        ("statute", "text", "  ", "text: must not be empty"),
        ("statute", "text", None, "text: must not be null"),
        ("statute", "key", "267", "key: '267' does not match number 266"),
        ("statute", "label", "第二百六十七条", "label: '第二百六十七条' does not match number 266"),
        ("statute", "label", "诈骗罪", "label: '诈骗罪' is not an article label"),
        ("statute", "charges", "诈骗罪", "charges: must be a list, got a string"),
        ("statute", "charges", ["诈骗"], "charges[0]: must end in 罪"),
        ("statute", "repealed", "no", "repealed: must be true or false, got a string"),
        ("statute", "valid_from", "2021/03/01", "valid_from: must be a date written YYYY-MM-DD"),
        ("statute", "valid_from", "2021-02-30", "valid_from: is not a real date"),
        ("statute", "valid_form", "2021-03-01", "valid_form: unknown field"),
        ("interpretation", "id", 5, "id: must be a string, got an integer"),
        ("interpretation", "articles", [191, "x"], "articles[1]: must be an integer, got a string"),
        ("interpretation", "articles", [-3], "articles[0]: must be at least 1"),
        ("checklist", "article", DELETE, "article: required field is missing"),
        ("checklist", "items", [], "items: must not be empty"),
        ("checklist", "items", ["是否", ""], "items[1]: must be a non-empty string"),
        ("checklist", "key", "133", "key: '133' does not match article 133 and sub 1"),
        ("checklist", "related.0.text", DELETE, "related[0].text: required field is missing"),
        ("checklist", "related.0", "text", "related[0]: must be an object, got a string"),
        ("case", "fact", "", "fact: must not be empty"),
        ("case", "term.months", -1, "term.months: must be at least 0, got -1"),
        ("case", "term.months", 601, "term.months: must be at most 600"),
        ("case", "term.months", 6.5, "term.months: must be an integer, got a number"),
        ("case", "term.life", DELETE, "term.life: required field is missing"),
        ("case", "term.kind", "枪决", "term.kind: unknown sentence kind"),
        ("case", "term", [6], "term: must be an object, got a list"),
        ("case", "defendants", [None], "defendants[0]: must be a non-empty string, got null"),
        ("case", "origin", "repo", "origin: must be an object, got a string"),
        ("case", "label_source", "guess", "label_source: unknown value 'guess'"),
        ("case", "fine", -5, "fine: must be at least 0"),
        ("case", "per_defendant", [{"name": "甲某", "charges": ["盗"]}], "per_defendant[0].charges[0]: must end in"),
    ],
)
def test_it_rejects_a_bad_row_and_names_the_field(kind, path, value, expected):
    found = problems(kind, changed(GOOD[kind], path, value))
    assert any(reason.startswith(expected) for reason in found), found


def test_it_rejects_validity_that_ends_before_it_starts():
    raw = dict(STATUTE, valid_from="2021-03-01", valid_to="2020-12-31")
    assert problems("statute", raw) == ["valid_to: 2020-12-31 is before valid_from 2021-03-01"]


def test_it_rejects_a_term_with_both_life_and_death():
    raw = changed(CASE, "term.life", True)
    raw["term"]["death"] = True
    assert problems("case", raw) == ["term: life and death cannot both be true"]


def test_it_rejects_a_row_that_is_not_an_object():
    not_an_object: object = ["not", "an", "object"]
    assert problems("case", not_an_object) == ["record: must be an object, got a list"]  # type: ignore[arg-type]


def test_it_reports_every_problem_of_every_row():
    rows = [(1, dict(STATUTE, number=-1, text="")), (2, STATUTE), (3, dict(STATUTE, number=267, key="266"))]
    with pytest.raises(ImportValidationError) as info:
        validate_records("statute", rows)
    assert [(e.line, e.reason.split(":")[0]) for e in info.value.errors] == [
        (1, "number"), (1, "text"), (3, "key"), (3, "label"),
    ]  # fmt: skip


def test_it_restricts_laws_when_the_caller_knows_them():
    raw = dict(STATUTE, law="中华人民共和国治安管理处罚法")
    with pytest.raises(ImportValidationError, match="law: unknown law"):
        validate_records("statute", [(1, raw)], known_laws={"中华人民共和国刑法"})


@pytest.mark.parametrize(
    ("kind", "duplicate"),
    [("statute", STATUTE), ("interpretation", INTERPRETATION), ("checklist", CHECKLIST), ("case", CASE)],
)
def test_it_rejects_the_same_record_twice_in_one_file(kind, duplicate):
    with pytest.raises(ImportValidationError) as info:
        validate_records(kind, [(1, duplicate), (2, duplicate)])
    [error] = info.value.errors
    assert error.line == 2 and "duplicate of line 1" in error.reason


def test_it_accepts_two_versions_of_an_article_with_different_start_dates():
    old = dict(STATUTE, valid_from="1997-10-01", valid_to="2021-02-28")
    new = dict(STATUTE, valid_from="2021-03-01", amendment=True)
    assert len(validate_records("statute", [(1, old), (2, new)])) == 2


@pytest.mark.parametrize(("kind", "raw"), GOOD.items())
def test_it_detects_the_kind_of_a_row_from_its_fields(kind, raw):
    assert detect_kind(raw) == kind


def test_it_refuses_to_guess_the_kind_of_an_unrecognisable_row():
    with pytest.raises(ValueError, match="cannot tell"):
        detect_kind({"title": "x"})


def test_it_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown record kind"):
        validate_records("judgment", [])
