"""The only module that talks Cypher to Apache AGE.

Values never enter the Cypher text: AGE accepts them only as one agtype
parameter map, and that map must be a real query parameter. Django's psycopg
cursor binds client-side (the value would arrive as a literal, which AGE
refuses), so every query is PREPAREd once per session with one ``agtype``
parameter and run with EXECUTE. Graph names and labels cannot be parameters;
they are checked against a strict pattern instead.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence

from django.db import connection

GRAPH_NAME = "hierargraph"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{2,62}$")
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class CypherError(ValueError):
    """A Cypher query that cannot be sent safely."""


def check_identifier(name: str) -> str:
    if not _IDENT.match(name):
        raise CypherError(f"invalid graph name {name!r}")
    return name


def check_label(label: str) -> str:
    if not _LABEL.match(label):
        raise CypherError(f"invalid label {label!r}")
    return label


def parse_agtype(value: str | None):
    """Turn one agtype result into Python values (vertices and edges become dicts).

    agtype text is JSON plus type annotations (``{...}::vertex``, ``3::numeric``)
    outside string literals; drop the annotations, then parse as JSON.
    """
    if value is None:
        return None
    if value.isdigit():  # the commonest result: a pk
        return int(value)
    if "::" not in value:  # no annotation anywhere (numbers, strings, plain lists and maps): JSON as it is
        return json.loads(value)
    out = []
    i, n, in_string = 0, len(value), False
    while i < n:
        ch = value[i]
        if in_string:
            out.append(ch)
            if ch == "\\":
                out.append(value[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ":" and value.startswith("::", i):
            i += 2
            while i < n and value[i].isalpha():
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return json.loads("".join(out))


def _statement_name(graph: str, query: str, columns: Sequence[str]) -> str:
    digest = hashlib.sha1(f"{graph}\x00{query}\x00{','.join(columns)}".encode()).hexdigest()[:20]
    return f"lx_cypher_{digest}"


def _prepared_names(cursor) -> set[str]:
    # Kept on the psycopg connection so it dies with the session it describes.
    raw = cursor.connection
    names = getattr(raw, "_lextrace_prepared", None)
    if names is None:
        names = set()
        raw._lextrace_prepared = names
    return names


def cypher(query: str, params: dict | None = None, *, columns: Sequence[str] = ("result",), graph: str = GRAPH_NAME) -> list[tuple]:
    """Run a Cypher query on ``graph`` and return parsed rows.

    ``query`` refers to values as ``$name``; ``params`` is the map that
    supplies them. ``columns`` names the returned agtype columns in order.
    """
    check_identifier(graph)
    if "$$" in query:
        raise CypherError("the Cypher text may not contain $$; pass values as parameters")
    for col in columns:
        check_label(col)
    name = _statement_name(graph, query, columns)
    coldefs = ", ".join(f"{c} agtype" for c in columns)
    with connection.cursor() as cursor:
        prepared = _prepared_names(cursor)
        if name not in prepared:
            cursor.execute("SELECT 1 FROM pg_prepared_statements WHERE name = %s", [name])
            if cursor.fetchone() is None:
                cursor.execute(
                    f"PREPARE {name}(agtype) AS SELECT * FROM ag_catalog.cypher('{graph}', $$ {query} $$, $1) AS ({coldefs})"
                )
            prepared.add(name)
        cursor.execute(f"EXECUTE {name}(%s)", [json.dumps(params or {}, ensure_ascii=False)])
        rows = cursor.fetchall()
    return [tuple(parse_agtype(v) for v in row) for row in rows]


def graph_exists(graph: str = GRAPH_NAME) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM ag_catalog.ag_graph WHERE name = %s", [check_identifier(graph)])
        return cursor.fetchone() is not None


def graph_create(graph: str = GRAPH_NAME) -> None:
    if not graph_exists(graph):
        with connection.cursor() as cursor:
            cursor.execute("SELECT ag_catalog.create_graph(%s)", [check_identifier(graph)])


def graph_drop(graph: str) -> None:
    if graph_exists(graph):
        with connection.cursor() as cursor:
            cursor.execute("SELECT ag_catalog.drop_graph(%s, true)", [check_identifier(graph)])


def labels(graph: str = GRAPH_NAME) -> Iterable[tuple[str, str]]:
    """(label name, kind 'v' or 'e') of a graph."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT l.name, l.kind FROM ag_catalog.ag_label l JOIN ag_catalog.ag_graph g ON g.graphid = l.graph "
            "WHERE g.name = %s AND l.name NOT LIKE '\\_ag\\_%%' ORDER BY l.name",
            [check_identifier(graph)],
        )
        return cursor.fetchall()


# --- bulk projection -------------------------------------------------------
# Loading the whole graph through one Cypher CREATE per element would take
# minutes; these write AGE's label tables directly with set-based SQL (values
# still travel only as query parameters). AGE fills the graph ids itself.

def _prop_expr(alias: str, prop: str = "pk") -> str:
    check_label(prop)
    return f"ag_catalog.agtype_access_operator(VARIADIC ARRAY[{alias}.properties, '\"{prop}\"'::ag_catalog.agtype])"


def _pk_expr(alias: str) -> str:
    return _prop_expr(alias, "pk")


def label_create(label: str, *, edge: bool = False, indexed: tuple[str, ...] = ("pk",), graph: str = GRAPH_NAME) -> None:
    """Create a vertex or edge label (idempotent) with the indexes our queries use.

    Creating labels and indexes needs the graph schema's owner: migrations do it
    (apps/graph/migrations/0003); at run time, as the application role, everything already
    exists and nothing is issued (CREATE INDEX IF NOT EXISTS would still need ownership).
    """
    check_identifier(graph)
    check_label(label)
    table = f'{graph}."{label}"'
    if edge:
        wanted = {f"{label}_start_idx": "(start_id)", f"{label}_end_idx": "(end_id)"}
    else:
        # AGE creates no index on a vertex's graph id, which every edge hop joins on.
        # Btree indexes serve `WHERE n.prop = $value` with a prepared parameter
        # (a `{prop: $value}` map pattern cannot use an index in a generic plan,
        # so queries filter with WHERE) and the bulk edge joins on pk.
        wanted = {f"{label}_id_idx": "(id)",
                  **{f"{label}_{prop}_idx": f"({_prop_expr(table, prop)})" for prop in indexed}}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM ag_catalog.ag_label l JOIN ag_catalog.ag_graph g ON g.graphid = l.graph "
            "WHERE g.name = %s AND l.name = %s",
            [graph, label],
        )
        if cursor.fetchone() is None:
            cursor.execute(f"SELECT ag_catalog.{'create_elabel' if edge else 'create_vlabel'}(%s, %s)", [graph, label])
        cursor.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = %s", [graph, label])
        present = {row[0] for row in cursor.fetchall()}
        for name, columns in wanted.items():
            if name not in present:
                cursor.execute(f'CREATE INDEX IF NOT EXISTS "{name}" ON {table} {columns}')


def vertices_insert(label: str, rows: list[dict], *, graph: str = GRAPH_NAME, chunk: int = 5000) -> int:
    """Insert vertices; every row is the property map and must carry ``pk`` and ``kind``."""
    check_identifier(graph)
    check_label(label)
    for row in rows:
        if "pk" not in row or "kind" not in row:
            raise CypherError("every vertex needs pk and kind properties")
    with connection.cursor() as cursor:
        for start in range(0, len(rows), chunk):
            cursor.execute(
                f'INSERT INTO {graph}."{label}" (properties) '
                "SELECT (e::text)::ag_catalog.agtype FROM jsonb_array_elements(%s::jsonb) e",
                [json.dumps(rows[start:start + chunk], ensure_ascii=False)],
            )
    return len(rows)


def edges_insert(label: str, start_label: str, end_label: str, triples: list[tuple[int, int, dict]],
                 *, graph: str = GRAPH_NAME, chunk: int = 5000) -> int:
    """Insert edges between vertices identified by their ``pk`` property."""
    check_identifier(graph)
    for name in (label, start_label, end_label):
        check_label(name)
    payload = [{"s": s, "t": t, "p": p or {}} for s, t, p in triples]
    inserted = 0
    with connection.cursor() as cursor:
        for start in range(0, len(payload), chunk):
            cursor.execute(
                f'INSERT INTO {graph}."{label}" (start_id, end_id, properties) '
                "SELECT s.id, t.id, ((e->'p')::text)::ag_catalog.agtype FROM jsonb_array_elements(%s::jsonb) e "
                f'JOIN {graph}."{start_label}" s ON {_pk_expr("s")} = ((e->>\'s\'))::ag_catalog.agtype '
                f'JOIN {graph}."{end_label}" t ON {_pk_expr("t")} = ((e->>\'t\'))::ag_catalog.agtype',
                [json.dumps(payload[start:start + chunk], ensure_ascii=False)],
            )
            inserted += cursor.rowcount
    return inserted


def label_counts(graph: str = GRAPH_NAME) -> dict[str, int]:
    """Rows per label (vertices and edges), read from AGE's tables."""
    names = [name for name, _kind in labels(graph)]
    if not names:
        return {}
    # One round trip for all labels (the statistics page reads them on every load).
    sql = " UNION ALL ".join(f'SELECT %s, count(*) FROM {check_identifier(graph)}."{check_label(name)}"' for name in names)
    with connection.cursor() as cursor:
        cursor.execute(sql, names)
        return {name: n for name, n in cursor.fetchall()}


def graph_clear(graph: str = GRAPH_NAME) -> None:
    """Empty every label of the graph, keeping labels and indexes.

    TRUNCATE is transactional: readers keep the old graph until commit. (Dropping
    and recreating the graph in one session leaves AGE's label cache pointing at
    the dropped tables: "label (relation) cache corrupted".)
    """
    graph_create(graph)
    tables = [f'{check_identifier(graph)}."{check_label(name)}"' for name, _ in labels(graph)]
    if tables:
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {', '.join(tables)}")


def graph_analyze(graph: str = GRAPH_NAME) -> None:
    """Refresh planner statistics after a bulk load (stale ones make the planner scan whole labels)."""
    with connection.cursor() as cursor:
        for name, _ in labels(graph):
            cursor.execute(f'ANALYZE {check_identifier(graph)}."{check_label(name)}"')
