from django.db import migrations


class Migration(migrations.Migration):
    """pgvector for embeddings, Apache AGE for the legal graph.

    CREATE EXTENSION age needs a superuser; in a managed deployment create the
    extensions once as the database owner and this migration is a no-op.
    """

    initial = True
    dependencies = []
    # AGE hooks DDL such as DROP COLUMN and needs its catalog to exist, so the
    # extensions come before any other app's migrations.
    run_before = [("contenttypes", "0001_initial"), ("auth", "0001_initial"), ("sessions", "0001_initial")]

    operations = [
        migrations.RunSQL("CREATE EXTENSION IF NOT EXISTS vector", reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL("CREATE EXTENSION IF NOT EXISTS age", reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL("CREATE EXTENSION IF NOT EXISTS btree_gist", reverse_sql=migrations.RunSQL.noop),
    ]
