"""PostgreSQL backend that prepares every connection for Apache AGE.

AGE's functions and the agtype type live in the ag_catalog schema, and its
library must be loaded per session (it installs the parser hooks that make
``cypher()`` work). Doing it here means no caller has to remember: every
connection Django opens (web, worker, tests, shell) is ready for Cypher.
``public`` stays first so Django's tables are created there.

``LOAD 'age'`` is reserved to superusers, and the application role is none
(docs/OPERATIONS.md, "Database roles"). Calling any C function of the library
loads it too, for any role, so the connection casts a literal to agtype. Our
clusters also preload it (``session_preload_libraries``, scripts/services.sh);
then the cast costs nothing more. A database without AGE (``postgres``, where
Django creates test databases) is left alone.
"""

from django.db.backends.postgresql import base

_LOAD_AGE = ("DO $$ BEGIN IF to_regtype('ag_catalog.agtype') IS NOT NULL THEN "
             "PERFORM 'null'::ag_catalog.agtype; END IF; END $$")


class DatabaseWrapper(base.DatabaseWrapper):
    def init_connection_state(self):
        super().init_connection_state()
        with self.connection.cursor() as cursor:
            cursor.execute(_LOAD_AGE)
            cursor.execute('SET search_path = public, ag_catalog, "$user"')
        if not self.get_autocommit():
            self.connection.commit()
