import pytest
from django.db import connection

from apps.graph import age


@pytest.mark.django_db
def test_it_has_the_vector_and_age_extensions():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extname FROM pg_extension")
        names = {row[0] for row in cursor.fetchall()}
    assert {"vector", "age"} <= names


@pytest.mark.django_db
def test_every_connection_is_ready_for_cypher_without_the_caller_asking():
    with connection.cursor() as cursor:
        cursor.execute("SHOW search_path")
        path = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM ag_graph WHERE name = 'hierargraph'")
        assert cursor.fetchone()[0] == 1
    assert path.startswith("public") and "ag_catalog" in path


@pytest.mark.django_db
def test_it_answers_a_pgvector_nearest_neighbour_query():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE probe_vec (id int, v vector(3))")
        cursor.execute(
            "INSERT INTO probe_vec VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]'), (4, '[0,0,1]')"
        )
        cursor.execute("SELECT id FROM probe_vec ORDER BY v <=> %s::vector LIMIT 2", ["[1,0.05,0]"])
        assert [r[0] for r in cursor.fetchall()] == [1, 3]


@pytest.fixture
def probe_label(db, settings):
    """A label of its own, inside the test's transaction. Labels are the owner's to create (the
    application role may only use the ones migrations made), so the owner makes it."""
    from tests.conftest import sql_as_owner

    sql_as_owner("SELECT ag_catalog.create_vlabel('hierargraph', 'Probe')")
    sql_as_owner(f'GRANT SELECT, INSERT ON hierargraph."Probe" TO "{settings.DB_APP_USER}"')
    sql_as_owner(f'GRANT USAGE ON SEQUENCE hierargraph."Probe_id_seq" TO "{settings.DB_APP_USER}"')


HOSTILE = "a $$ b ' \" \\ 盗窃公私财物，数额较大的\n第二行 $1 %s {x} \u200b"


def test_a_hostile_value_round_trips_byte_identical_through_cypher(probe_label):
    created = age.cypher("CREATE (n:Probe {text: $text}) RETURN n.text", {"text": HOSTILE}, columns=["text"])
    assert created == [(HOSTILE,)]
    found = age.cypher("MATCH (n:Probe) WHERE n.text = $text RETURN n", {"text": HOSTILE}, columns=["n"])
    assert len(found) == 1
    vertex = found[0][0]
    assert vertex["label"] == "Probe"
    assert vertex["properties"]["text"].encode() == HOSTILE.encode()


def test_the_same_query_is_prepared_once_per_session(probe_label):
    def prepared():
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'lx_cypher_%%'")
            return cursor.fetchone()[0]

    before = prepared()
    for i in range(3):
        age.cypher("CREATE (n:Probe {i: $i}) RETURN n.i", {"i": i}, columns=["i"])
    assert prepared() == before + 1
    assert age.cypher("MATCH (n:Probe) RETURN count(n)", columns=["c"]) == [(3,)]


@pytest.mark.parametrize(
    "query, columns",
    [
        ("MATCH (n) WHERE n.t = $$x$$ RETURN n", ["n"]),
        ("MATCH (n) RETURN n", ["n agtype); DROP TABLE x; --"]),
    ],
)
def test_it_refuses_cypher_text_that_could_break_out(query, columns):
    with pytest.raises(age.CypherError):
        age.cypher(query, {}, columns=columns)


def test_it_refuses_a_graph_name_that_is_not_an_identifier():
    with pytest.raises(age.CypherError):
        age.cypher("MATCH (n) RETURN n", graph="x'); DROP")


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('"plain"', "plain"),
        ("3", 3),
        ("-3", -3),
        ('[1, 2, "a"]', [1, 2, "a"]),
        ('{"pk": 7, "names": ["盗窃罪"]}', {"pk": 7, "names": ["盗窃罪"]}),
        ("2.5::numeric", 2.5),
        ('{"id": 1, "label": "A", "properties": {"t": "x}::vertex"}}::vertex', {"id": 1, "label": "A", "properties": {"t": "x}::vertex"}}),
        ('[{"id": 1, "label": "A", "properties": {}}::vertex, {"id": 2, "label": "R", "end_id": 3, "start_id": 1, "properties": {}}::edge]::path',
         [{"id": 1, "label": "A", "properties": {}}, {"id": 2, "label": "R", "end_id": 3, "start_id": 1, "properties": {}}]),
        ('"back\\\\slash \\"quoted\\" ::vertex"', 'back\\slash "quoted" ::vertex'),
        (None, None),
    ],
)
def test_it_parses_agtype_text_without_touching_string_contents(raw, expected):
    assert age.parse_agtype(raw) == expected
