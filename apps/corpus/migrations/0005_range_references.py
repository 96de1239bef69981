"""Article references over ranges: "单位犯本节第一百四十条至第一百四十八条规定之罪" refers to every article from
140 to 148, not to the two ends alone (apps/corpus/services/appliers._link_references now links ranges on
import). Links the ranges of the statutes already imported, and re-projects the articles whose edges
changed into the AGE graph when one is built."""

from django.db import migrations


def link_ranges(apps, schema_editor):
    from worker.agents.numerals import find_article_ranges

    Article = apps.get_model("corpus", "Article")
    ArticleVersion = apps.get_model("corpus", "ArticleVersion")
    changed = set()
    for version in ArticleVersion.objects.filter(valid_to__isnull=True).select_related("article"):
        article = version.article
        ranges = find_article_ranges(version.text)
        if not ranges:
            continue
        numbers = {n for start, end in ranges for n in range(start[0], end[0] + 1)}
        targets = [a for a in Article.objects.filter(law_id=article.law_id, number__in=numbers)
                   if a.pk != article.pk and any(start <= (a.number, a.sub) <= end for start, end in ranges)]
        present = set(article.refers_to.values_list("pk", flat=True))
        missing = [a for a in targets if a.pk not in present]
        if missing:
            article.refers_to.add(*missing)
            changed.add(article.pk)
    if changed:
        from apps.graph.services.projection import graph_sync

        graph_sync("Article", changed)  # does nothing when no graph is built


class Migration(migrations.Migration):
    dependencies = [("corpus", "0004_importbatch_job")]
    operations = [migrations.RunPython(link_ranges, migrations.RunPython.noop)]
