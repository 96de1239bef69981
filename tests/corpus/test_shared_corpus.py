"""The real corpus in ../shared/data imports completely, with the README's counts."""

import json

import pytest
from django.core.management import call_command

from apps.corpus.services.importing import directory_files
from apps.corpus.models import Article, ArticleVersion, Charge, ImportBatch, Interpretation, Precedent

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_importing_all_of_the_shared_data_gives_the_readme_counts(shared_data, capsys):
    call_command("import_corpus", str(shared_data), "--no-progress")
    manifest = json.loads((shared_data / "manifest.json").read_text())
    assert ArticleVersion.objects.count() == manifest["law"]["statutes"] == 591
    assert Interpretation.objects.count() == manifest["law"]["interpretations"] == 657
    assert Article.objects.filter(versions__checklist__isnull=False).distinct().count() == manifest["law"]["checklists"] == 487
    assert Precedent.objects.count() == manifest["corpus"]["cases"] == 13110
    assert ArticleVersion.objects.filter(repealed=True).count() == manifest["law"]["statutes_repealed"]
    # Every category charge is known and categorised.
    categories = json.loads((shared_data / "charge_categories.json").read_text())
    for category, names in categories.items():
        assert Charge.objects.filter(name__in=names, categories__contains=[category]).count() == len(set(names))
    theft = Article.objects.get(law__title="中华人民共和国刑法", number=264, sub=0)
    assert theft.charges.filter(name="盗窃罪").exists()
    assert theft.versions.get().checklist.filter(variant="main").count() > 0

    # Importing the same directory again changes nothing.
    call_command("import_corpus", str(shared_data), "--no-progress")
    files = len(directory_files(shared_data))
    assert list(ImportBatch.objects.order_by("-pk")[:files].values_list("status", flat=True)) == ["duplicate"] * files
    assert Precedent.objects.count() == 13110 and ArticleVersion.objects.count() == 591
