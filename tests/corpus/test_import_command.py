"""`manage.py import_corpus`: one command per kind of source, the dry run, confirmation, progress."""

import datetime as dt
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

from apps.corpus.models import ArticleVersion, ImportBatch, Precedent
from tests.corpus.judgments import docx, judgment, single
from tests.corpus.test_cail import cail, lines
from tests.corpus.test_import_formats import AMENDED, STATUTE, facts

pytestmark = pytest.mark.django_db


class Terminal(io.StringIO):
    def isatty(self):
        return True


def command(*args, **kwargs) -> tuple[str, str]:
    out, err = kwargs.pop("stdout", io.StringIO()), io.StringIO()
    with translation.override("en"):
        call_command("import_corpus", *args, stdout=out, stderr=err, **kwargs)
    return out.getvalue(), err.getvalue()


def test_a_cail2018_download_imports_every_file_in_one_command(tmp_path):
    exercise = tmp_path / "final_all_data" / "exercise_contest"
    exercise.mkdir(parents=True)
    all_facts = facts(5)
    (exercise / "data_train.json").write_bytes(lines(*(cail(fact=f) for f in all_facts[:3])))
    (exercise / "data_test.json").write_bytes(lines(*(cail(fact=f) for f in all_facts[3:])))
    out, _ = command(str(tmp_path), "--format", "cail2018", "--no-progress")
    assert "final_all_data/exercise_contest/data_train.json: published" in out
    assert Precedent.objects.count() == 5 and ImportBatch.objects.filter(format="cail2018", status="published").count() == 2
    out, _ = command(str(tmp_path), "--no-progress")  # detected; identical files change nothing
    assert out.count(": identical to an earlier import") == 2


def test_the_dry_run_lists_what_would_be_added_merged_and_every_refused_record_and_writes_nothing(tmp_path):
    command(_write(tmp_path / "a.json", lines(cail(fact=facts(1)[0]))), "--no-progress")
    data = lines(cail(fact=facts(1)[0] + "。"), cail(fact=facts(2)[1]), cail(accusation=[]), cail(punish_of_money=-5))
    path = _write(tmp_path / "b.json", data)
    batches = ImportBatch.objects.count()
    with pytest.raises(CommandError, match="2 records would be refused"):
        command(path, "--dry-run", "--no-progress")
    assert ImportBatch.objects.count() == batches and Precedent.objects.count() == 1
    out, _ = command(path, "--dry-run", "--skip-refused", "--no-progress")
    assert "would add 1, leave unchanged 0, merge as duplicates 1, refuse 2" in out
    assert "merged line 1:" in out and "(same normalised fact)" in out
    assert "refused line 3: meta.accusation" in out and "refused line 4: meta.punish_of_money" in out
    assert Precedent.objects.count() == 1


def test_a_folder_of_judgments_is_shown_and_published_only_when_confirmed(tmp_path):
    folder = tmp_path / "判决书"
    folder.mkdir()
    (folder / "a.txt").write_text(judgment(), encoding="utf-8")
    (folder / "b.docx").write_bytes(docx(single("被告人丁某犯盗窃罪，判处有期徒刑八个月，并处罚金人民币二千元。")))
    with pytest.raises(CommandError, match="re-run with --yes"):
        out, _ = command(str(folder), "--no-progress")
    assert Precedent.objects.count() == 0 and not ImportBatch.objects.exists()
    out, _ = command(str(folder), "--yes", "--no-progress")
    assert "甲某: 盗窃罪; 有期徒刑1年6个月，罚金 5000 元" in out and "乙某某: 盗窃罪; 拘役5个月，缓刑，罚金 2000 元" in out
    assert "判决书/: published" in out
    batch = ImportBatch.objects.get()
    assert batch.format == "judgment" and batch.counts["added"] == 2 and Precedent.objects.count() == 2


def test_an_amended_statute_text_is_one_command(tmp_path):
    law = "中华人民共和国刑法"
    command(_write(tmp_path / "刑法.txt", STATUTE.encode()), "--law", law, "--no-progress")
    out, _ = command(_write(tmp_path / "刑法修正.txt", AMENDED.encode()), "--format", "statute-txt", "--law", law,
                     "--effective-date", "2021-03-01", "--version-label", "刑法修正案（示例）", "--no-progress")
    assert "刑法修正.txt: published — added 2, amended 1, unchanged 1" in out
    assert "amended line 4: 第二百六十四条 from 2021-03-01, superseding the version in force since before any recorded version" in out
    new = ArticleVersion.objects.get(article__number=264, article__sub=0, valid_from=dt.date(2021, 3, 1))
    assert new.supersedes.valid_to == dt.date(2021, 2, 28)


def test_the_command_shows_a_progress_bar_with_its_stages_on_a_terminal(tmp_path):
    _, err = command(_write(tmp_path / "a.json", lines(*(cail(fact=f) for f in facts(3)))), stdout=Terminal())
    assert "checking against the corpus" in err and "writing" in err


def test_a_failed_import_lists_every_refused_record_and_exits_non_zero(tmp_path):
    rows = [cail(fact=f) for f in facts(3)] + [cail(accusation=[]) for _ in range(3)]
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing from this file was written"):
        call_command("import_corpus", _write(tmp_path / "x.json", lines(*rows)), "--no-progress", stdout=io.StringIO(), stderr=err)
    assert [line.split(":")[0].strip() for line in err.getvalue().splitlines()] == ["line 4", "line 5", "line 6"]


def test_a_folder_of_lecard_files_imports_queries_and_candidates(tmp_path):
    (tmp_path / "query").mkdir()
    fs = facts(3)
    (tmp_path / "query" / "query.json").write_bytes(
        b"".join(json.dumps({"path": "p", "ridx": i, "q": f, "crime": ["盗窃罪"]}, ensure_ascii=False).encode() + b"\n"
                 for i, f in enumerate(fs[:2])))
    (tmp_path / "candidates" / "0").mkdir(parents=True)
    (tmp_path / "candidates" / "0" / "w1.json").write_text(json.dumps(
        {"ajId": "a", "ajName": "…", "ajjbqk": fs[2], "pjjg": "被告人张2号犯盗窃罪，判处拘役三个月。", "qw": "", "writId": "w1",
         "writName": "…"}, ensure_ascii=False, indent=2), encoding="utf-8")
    out, _ = command(str(tmp_path), "--no-progress")
    assert "query/query.json: published" in out and f"{tmp_path.name}/: published" in out
    assert sorted(Precedent.objects.values_list("ext_id", flat=True)) == ["lecard-q-0", "lecard-q-1", "lecard-w1"]


def _write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)
