"""Planner statistics after bulk loads.

Autovacuum analyzes a table only after the loading transaction commits. A bulk
load followed by queries in the same transaction (an import and its graph
follow-up, a graph rebuild, or any test) would otherwise be planned with the
statistics of the empty table: nested loops over tens of thousands of rows.
ANALYZE inside a transaction counts that transaction's own new rows.
"""

from django.db import connection


def tables_analyze(*models) -> None:
    """ANALYZE the tables of ``models`` (model classes) and of their many-to-many links."""
    tables = []
    for model in models:
        tables.append(model._meta.db_table)
        tables += [f.remote_field.through._meta.db_table for f in model._meta.many_to_many
                   if f.remote_field.through._meta.auto_created]
    with connection.cursor() as cursor:
        for table in dict.fromkeys(tables):
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
