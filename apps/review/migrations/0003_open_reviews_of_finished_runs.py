"""Open the review of every finished run that has none yet: since this migration the worker opens it
when the run finishes, so that viewing a review never writes."""

from django.db import migrations


def open_reviews(apps, schema_editor):
    JudgmentRun = apps.get_model("cases", "JudgmentRun")
    Review = apps.get_model("review", "Review")
    missing = JudgmentRun.objects.filter(status="done", review__isnull=True).values_list("pk", flat=True)
    Review.objects.bulk_create([Review(run_id=pk) for pk in missing.iterator()], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0002_coverage"),
    ]

    operations = [
        migrations.RunPython(open_reviews, migrations.RunPython.noop),
    ]
