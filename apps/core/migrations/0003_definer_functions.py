"""The one piece of DDL the application does at run time, as functions the owner provides.

A dense search index gets an HNSW index of its own over its rows of corpus_densevector
(apps/corpus/services/indexing.py), built while the application runs. CREATE INDEX needs the
table's owner, and the application role owns nothing (apps/core/db_roles.py), so the owner
provides two SECURITY DEFINER functions that do exactly that and nothing else: the index name,
column, operator class and predicate are fixed here; the caller passes only the search index's
id (which must be a dense index) and the dimension. EXECUTE is granted to the application role
alone (``migrate`` revokes it from PUBLIC).
"""

from django.db import migrations

CREATE = r"""
CREATE FUNCTION corpus_hnsw_index_create(p_index bigint, p_dim integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
BEGIN
    IF p_dim IS NULL OR p_dim < 1 OR p_dim > 2000 THEN
        RAISE EXCEPTION 'corpus_hnsw_index_create: dimension % is outside 1..2000', p_dim
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM corpus_searchindex WHERE id = p_index AND method = 'dense') THEN
        RAISE EXCEPTION 'corpus_hnsw_index_create: % is not a dense search index', p_index
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON public.corpus_densevector '
                   'USING hnsw ((vector::vector(%s)) vector_cosine_ops) WHERE index_id = %s',
                   'corpus_densevector_hnsw_' || p_index, p_dim, p_index);
END
$fn$;
REVOKE ALL ON FUNCTION corpus_hnsw_index_create(bigint, integer) FROM PUBLIC;

CREATE FUNCTION corpus_hnsw_index_drop(p_index bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
BEGIN
    EXECUTE format('DROP INDEX IF EXISTS public.%I', 'corpus_densevector_hnsw_' || p_index);
END
$fn$;
REVOKE ALL ON FUNCTION corpus_hnsw_index_drop(bigint) FROM PUBLIC;
"""

DROP = r"""
DROP FUNCTION corpus_hnsw_index_drop(bigint);
DROP FUNCTION corpus_hnsw_index_create(bigint, integer);
"""


class Migration(migrations.Migration):
    dependencies = [("core", "0002_initial"), ("corpus", "0002_search_index_features")]

    operations = [migrations.RunSQL(CREATE, DROP)]
