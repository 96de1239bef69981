from django.db import migrations


class Migration(migrations.Migration):
    initial = True
    dependencies = [("core", "0001_extensions")]

    operations = [
        migrations.RunSQL(
            "SELECT ag_catalog.create_graph('hierargraph') "
            "WHERE NOT EXISTS (SELECT 1 FROM ag_catalog.ag_graph WHERE name = 'hierargraph')",
            reverse_sql="SELECT ag_catalog.drop_graph('hierargraph', true) "
            "WHERE EXISTS (SELECT 1 FROM ag_catalog.ag_graph WHERE name = 'hierargraph')",
        ),
    ]
