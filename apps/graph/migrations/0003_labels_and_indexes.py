from django.db import migrations


def create_labels(apps, schema_editor):
    # The labels and their indexes (pk and lookup properties, vertex ids, edge
    # start/end ids) exist from the first migration on; projections only fill them.
    from apps.graph.services.projection import _create_labels

    _create_labels()


class Migration(migrations.Migration):
    dependencies = [("graph", "0002_initial"), ("corpus", "0002_search_index_features")]

    operations = [migrations.RunPython(create_labels, migrations.RunPython.noop)]
