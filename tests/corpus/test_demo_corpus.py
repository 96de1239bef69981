"""The demo corpus shipped in the repository loads through the same importer."""

import datetime as dt
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.corpus.models import Article, ArticleVersion, Charge, Interpretation, Precedent, PrecedentOutcome
from apps.corpus.selectors import article_version_in_force

DEMO = Path(__file__).resolve().parents[2] / "apps" / "corpus" / "demo"
pytestmark = pytest.mark.django_db


def test_the_demo_corpus_imports_and_meets_its_promised_size():
    call_command("import_corpus", str(DEMO), "--no-progress")
    specific = Article.objects.filter(number__gte=102, versions__isnull=False).distinct()
    assert specific.count() >= 15
    assert all(a.versions.filter(checklist__isnull=False).exists() for a in specific)
    assert Interpretation.objects.count() >= 12
    assert Precedent.objects.count() >= 40
    charged = Charge.objects.filter(outcomes__isnull=False).distinct()
    assert charged.count() >= 8
    assert all(c.categories for c in charged), "every demo charge has a category"


def test_the_demo_showcase_case_has_two_defendants_and_theft_has_two_versions():
    call_command("import_corpus", str(DEMO), "--no-progress")
    outcomes = PrecedentOutcome.objects.filter(precedent__ext_id="demo-case-001").order_by("position")
    assert [o.defendant for o in outcomes] == ["王某", "赵某"]
    law = "中华人民共和国刑法"
    old = article_version_in_force(law_title=law, number=264, day=dt.date(2009, 6, 1))
    new = article_version_in_force(law_title=law, number=264, day=dt.date(2018, 6, 1))
    assert old and new and old != new and new.supersedes == old
    assert ArticleVersion.objects.filter(article__number=264).count() == 2


def test_the_demo_interpretation_of_another_law_stays_with_that_law():
    call_command("import_corpus", str(DEMO), "--no-progress")
    interp = Interpretation.objects.get(ext_id="DEMO-JI-006")
    assert [a.law.title for a in interp.articles.all()] == ["中华人民共和国治安管理处罚法"]
