"""PostgreSQL backend that prepares every connection for Apache AGE.

AGE's functions and the agtype type live in the ag_catalog schema, and its
library must be loaded per session. Doing it here means no caller has to
remember: every connection Django opens (web, worker, tests, shell) is ready
for Cypher. ``public`` stays first so Django's tables are created there.
"""

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def init_connection_state(self):
        super().init_connection_state()
        with self.connection.cursor() as cursor:
            cursor.execute("LOAD 'age'")
            cursor.execute('SET search_path = public, ag_catalog, "$user"')
        if not self.get_autocommit():
            self.connection.commit()
