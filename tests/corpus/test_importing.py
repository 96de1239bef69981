"""corpus_import: all-or-nothing, idempotent, versioned (RELIABILITY.md G6–G10)."""

import datetime as dt

import pytest

from apps.corpus.models import Article, ArticleVersion, ImportBatch, Interpretation, Precedent, PrecedentOutcome
from apps.corpus.selectors import article_version_in_force, corpus_counts
from apps.corpus.services.importing import corpus_import
from tests.corpus.conftest import case, jsonl, statute

pytestmark = pytest.mark.django_db


def do_import(data: bytes, name="statutes.jsonl", **kw) -> ImportBatch:
    return corpus_import(data=data, filename=name, **kw)


def test_it_imports_statutes_and_reimporting_identical_content_changes_nothing():
    data = jsonl(statute(264), statute(266, text="诈骗公私财物，数额较大的，依照本法第二百六十四条的规定处罚。"))
    first = do_import(data)
    assert first.status == "published" and first.counts["added"] == 2
    assert Article.objects.get(number=266).refers_to.get().number == 264
    again = do_import(data)
    assert again.status == "duplicate"
    reordered = do_import(jsonl(statute(266, text="诈骗公私财物，数额较大的，依照本法第二百六十四条的规定处罚。"), statute(264)))
    assert reordered.status == "published" and reordered.counts == {"added": 0, "amended": 0, "unchanged": 2, "references": 1}
    assert ArticleVersion.objects.count() == 2


def test_a_range_of_articles_is_referred_to_whole_sub_articles_included():
    unit = "单位犯本节第二百一十三条至第二百一十五条规定之罪的，对单位判处罚金。"
    do_import(jsonl(statute(213), statute(214), statute(214, sub=1), statute(215), statute(216), statute(220, text=unit)))
    refers = sorted((a.number, a.sub) for a in Article.objects.get(number=220).refers_to.all())
    assert refers == [(213, 0), (214, 0), (214, 1), (215, 0)]
    do_import(jsonl(statute(213, sub=1), statute(215, sub=1)))  # added later: 213之一 is inside the range, 215之一 not
    refers = {(a.number, a.sub) for a in Article.objects.get(number=220).refers_to.all()}
    assert (213, 1) in refers and (215, 1) not in refers and not Article.objects.get(number=216).referred_by.exists()


def test_a_changed_article_is_rejected_with_a_diff_unless_it_is_an_amendment():
    do_import(jsonl(statute(264)))
    changed = statute(264, text="盗窃公私财物，数额较大的，或者多次盗窃的，处三年以下有期徒刑。")
    batch = do_import(jsonl(changed))
    assert batch.status == "failed"
    assert batch.errors[0]["line"] == 1
    assert "+盗窃公私财物，数额较大的，或者多次盗窃的" in batch.errors[0]["reason"]
    assert ArticleVersion.objects.count() == 1

    amended = do_import(jsonl(dict(changed, valid_from="2011-05-01")), amendment=True)
    assert amended.status == "published" and amended.counts["amended"] == 1
    old, new = ArticleVersion.objects.order_by("pk")
    assert old.valid_to == dt.date(2011, 4, 30) and new.supersedes == old and new.valid_to is None
    assert old.text == statute()["text"], "an amendment never rewrites the old text"
    law = "中华人民共和国刑法"
    assert article_version_in_force(law_title=law, number=264, day=dt.date(2010, 1, 1)) == old
    assert article_version_in_force(law_title=law, number=264, day=dt.date(2011, 5, 1)) == new


def test_overlapping_versions_are_refused_by_the_database_too():
    from django.db import IntegrityError, transaction

    do_import(jsonl(statute(264)))
    version = ArticleVersion.objects.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        ArticleVersion.objects.create(article=version.article, text="x", text_sha256="x", valid_from=dt.date(2020, 1, 1))


def test_an_interpretation_of_another_law_does_not_attach_to_the_criminal_law():
    do_import(jsonl(statute(49, text="第四十九条 示例文本。")))
    interp = {"id": "JI-T1", "source": "示例解释", "para": "第一条", "text": "依照治安管理处罚法第四十九条处理。",
              "articles": [49], "law": "中华人民共和国治安管理处罚法"}
    batch = do_import(jsonl(interp), name="interpretations.jsonl")
    assert batch.status == "published", batch.errors
    linked = Interpretation.objects.get().articles.get()
    assert linked.law.title == "中华人民共和国治安管理处罚法"
    assert not Article.objects.get(law__title="中华人民共和国刑法", number=49).interpretations.exists()


def test_a_checklist_for_an_unknown_article_names_the_line():
    do_import(jsonl(statute(264)))
    checklist = {"article": 266, "sub": 0, "key": "266", "label": "第二百六十六条", "items": ["是否虚构事实"],
                 "charges": ["诈骗罪"], "related": []}
    batch = do_import(jsonl(checklist), name="checklists.jsonl")
    assert batch.status == "failed"
    assert batch.errors == [{"line": 1, "reason": "no statute text for article 266: import the statutes first"}]


def test_a_checklists_article_level_charges_do_not_give_a_provision_its_sub_articles_charge():
    # found on the development split: 390, the punishment of 行贿罪, was imported as defining 390之一's 对有影响力的人行贿罪
    # (the checklist's charges are article-level) and judged a plain bribery under that name
    influence = "为谋取不正当利益，向国家工作人员的近亲属行贿的，处三年以下有期徒刑或者拘役，并处罚金。"
    do_import(jsonl(statute(390, text="对犯行贿罪的，处五年以下有期徒刑或者拘役，并处罚金。"),
                    statute(390, sub=1, text=influence, charges=["对有影响力的人行贿罪"]),
                    statute(155, text="下列行为，以走私罪论处，依照本节的有关规定处罚。")))
    checklist = {"article": 390, "sub": 0, "key": "390", "label": "第390条", "items": ["是否犯行贿罪"],
                 "charges": ["对有影响力的人行贿罪"], "related": []}
    smuggling = {"article": 155, "sub": 0, "key": "155", "label": "第155条", "items": ["是否直接向走私人非法收购"],
                 "charges": ["走私罪"], "related": []}
    assert do_import(jsonl(checklist, smuggling), name="checklists.jsonl").status == "published"
    def names(number, sub):
        return sorted(Article.objects.get(number=number, sub=sub).charges.values_list("name", flat=True))

    assert names(390, 0) == [] and names(390, 1) == ["对有影响力的人行贿罪"]
    assert names(155, 0) == ["走私罪"], "no sibling defines it: the checklist's list stands"


def test_cases_get_one_outcome_per_defendant():
    do_import(jsonl(statute(264)))
    two = case("c-2", fact="被告人王某、赵某共同盗窃财物，赵某另诈骗他人钱款。", defendants=["王某", "赵某"], charges=["盗窃罪", "诈骗罪"], term=None,
               per_defendant=[{"name": "王某", "charges": ["盗窃罪"], "term": {"months": 8, "life": False, "death": False}},
                              {"name": "赵某", "charges": ["盗窃罪", "诈骗罪"], "term": {"months": 20, "life": False, "death": False}}])
    batch = do_import(jsonl(case("c-1"), two), name="cases.jsonl")
    assert batch.status == "published", batch.errors
    outcomes = PrecedentOutcome.objects.filter(precedent__ext_id="c-2").order_by("position")
    assert [o.defendant for o in outcomes] == ["王某", "赵某"]
    assert [sorted(c.name for c in o.charges.all()) for o in outcomes] == [["盗窃罪"], ["盗窃罪", "诈骗罪"]]
    assert [o.term_months for o in outcomes] == [8, 20]
    assert PrecedentOutcome.objects.get(precedent__ext_id="c-1").articles.get().number == 264


BAD_LINES = {
    "bad utf-8": b'{"id": "x", "fact": "\xff\xfe"}\n',
    "bom": b'\xef\xbb\xbf{"id": "x"}\n',
    "lone surrogate": b'{"id": "\\ud800"}\n',
    "nul": b'{"id": "a\\u0000b"}\n',
    "duplicate keys": b'{"id": "a", "id": "b"}\n',
    "nan": b'{"id": "a", "fine": NaN}\n',
    "huge int": b'{"id": "a", "fine": ' + b"9" * 5000 + b"}\n",
    "deep nesting": b'{"id": ' + b"[" * 500 + b"]" * 500 + b"}\n",
    "trailing junk": b'{"id": "a"} xyz\n',
    "not an object": b'["a"]\n',
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_a_malformed_line_rejects_the_whole_file_and_names_the_line(name):
    good = jsonl(case("c-1"), case("c-2", fact="被告人李某盗窃电动车一辆。"))
    data = good + BAD_LINES[name] + jsonl(case("c-4", fact="被告人王某盗窃现金五百元。"))
    do_import(jsonl(statute(264)))
    before = corpus_counts()
    batch = do_import(data, name="cases.jsonl")
    assert batch.status == "failed"
    assert 3 in [e["line"] for e in batch.errors], batch.errors
    assert corpus_counts() == before


@pytest.mark.parametrize(
    "record, field",
    [
        ({k: v for k, v in statute().items() if k != "number"}, "number"),
        (statute(valid_from="2020-01-02", valid_to="2020-01-01"), "valid_to"),
        (statute(text=""), "text"),
    ],
)
def test_a_schema_invalid_record_is_rejected_naming_the_field(record, field):
    batch = do_import(jsonl(statute(266), record))
    assert batch.status == "failed"
    assert batch.errors[0]["line"] == 2 and field in batch.errors[0]["reason"]
    assert ArticleVersion.objects.count() == 0


def test_a_failure_at_row_n_of_a_large_import_writes_nothing():
    do_import(jsonl(statute(264)))
    do_import(jsonl(case("existing", fact="原有案件事实。")), name="cases.jsonl")
    rows = [case(f"big-{i}", fact=f"被告人甲某第{i}次盗窃他人财物。") for i in range(3000)]
    rows[2900] = case("existing", fact="与已存案件不同的事实。")
    batch = do_import(jsonl(*rows), name="cases.jsonl")
    assert batch.status == "failed"
    assert batch.errors == [{"line": 2901, "reason": "precedent existing already exists with a different fact text"}]
    assert Precedent.objects.count() == 1


def test_a_crash_in_the_middle_of_writing_rolls_everything_back(monkeypatch):
    do_import(jsonl(statute(264)))
    from django.db.models.query import QuerySet

    original = QuerySet.bulk_create

    def explode(self, objs, *args, **kwargs):
        if self.model is PrecedentOutcome:
            raise RuntimeError("disk on fire")
        return original(self, objs, *args, **kwargs)

    monkeypatch.setattr(QuerySet, "bulk_create", explode)
    with pytest.raises(RuntimeError):
        do_import(jsonl(case("c-1"), case("c-2", fact="另一事实。")), name="cases.jsonl")
    assert Precedent.objects.count() == 0
    assert ImportBatch.objects.filter(filename="cases.jsonl").get().status == "failed"


def test_a_file_of_mixed_record_kinds_is_refused():
    batch = do_import(jsonl(statute(264), case("c-1")))
    assert batch.status == "failed"
    assert "one kind of record" in batch.errors[0]["reason"]
