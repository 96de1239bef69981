import pytest

from apps.graph.services.projection import graph_project_all

pytestmark = pytest.mark.django_db


def test_the_statistics_page_compares_graph_and_tables(personas, demo_corpus):
    graph_project_all()
    page = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en").get("/graph/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "consistent" in html and "CITES" in html and "cites" in html


def test_the_explorer_finds_an_article_and_lists_its_neighbourhood_without_javascript(personas, demo_corpus):
    graph_project_all()
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    html = client.get("/graph/explore/", {"q": "133-1"}).content.decode()
    assert "危险驾驶罪" in html and "refers to" in html and "REFERS_TO" not in html and "第一百三十三条" in html
    assert 'id="node-detail"' in html and "醉酒" in html, "the article itself is opened: its text in force"
    missing = client.get("/graph/explore/", {"q": "no-such-thing"}).content.decode()
    assert "Nothing in the graph matches" in missing


def test_the_neighbourhood_json_is_cytoscape_ready(personas, demo_corpus):
    graph_project_all()
    from apps.corpus.models import Precedent

    case = Precedent.objects.get(ext_id="demo-case-001")
    data = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en").get(f"/graph/neighbourhood/Case/{case.pk}.json").json()
    center = [n for n in data["nodes"] if n["center"]]
    assert len(center) == 1 and center[0]["caption"] == "demo-case-001"
    ids = {n["id"] for n in data["nodes"]}
    assert data["edges"] and all(e["source"] in ids and e["target"] in ids for e in data["edges"])
    assert {e["label"] for e in data["edges"]} >= {"CITES", "CONVICTED_OF"}


def test_an_unknown_label_is_404(personas):
    assert personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en").get("/graph/neighbourhood/Secret/1.json").status_code == 404


def test_the_drawing_is_the_same_on_every_load_and_every_node_opens_something(personas, demo_corpus):
    graph_project_all()
    from apps.corpus.models import Article

    article = Article.objects.get(number=264, sub=0)
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="zh-hans")
    first = client.get(f"/graph/neighbourhood/Article/{article.pk}.json").json()
    assert first == client.get(f"/graph/neighbourhood/Article/{article.pk}.json").json(), "no random order"
    assert {e["caption"] for e in first["edges"]} >= {"引用", "规定", "解释"}, "edge labels in the page language"
    kinds = {n["label"] for n in first["nodes"] if not n["center"] and n["url"]}
    assert {"Case", "Offence", "Interpretation"} <= kinds, "clicking a precedent, charge or interpretation opens it"
    interpretation = next(n for n in first["nodes"] if n["label"] == "Interpretation")
    page = client.get(interpretation["url"]).content.decode()
    assert 'id="node-detail"' in page and "司法解释" in page
    assert {row["label"] for row in first["legend"]} >= {"判例", "罪名", "司法解释"}


def test_the_neighbourhood_is_paginated_and_the_pages_cover_it_once(personas, demo_corpus):
    graph_project_all()
    from apps.corpus.models import Article
    from apps.graph import age
    from apps.graph.selectors import graph_neighbourhood

    article = Article.objects.get(number=264, sub=0)
    (everything,), = age.cypher("MATCH (n:Article)-[r]-(m) WHERE n.pk = $pk RETURN count(*)", {"pk": article.pk},
                                columns=["n"])
    first = graph_neighbourhood("Article", article.pk, page=1, per_page=7)
    assert first["total"] == everything > 7 and first["pages"] == -(-everything // 7)
    seen = []
    for number in range(1, first["pages"] + 1):
        page = graph_neighbourhood("Article", article.pk, page=number, per_page=7)
        assert len(page["rows"]) == (7 if number < first["pages"] else everything - 7 * (first["pages"] - 1))
        assert sum(1 for n in page["nodes"] if not n["center"]) <= 7, "the drawing shows the page only"
        seen += [(r["relation"], r["kind"], r["caption"], r["outgoing"]) for r in page["rows"]]
    assert len(seen) == everything and len(set(seen)) == everything, "every neighbour once"
    # The rule graph of the article (its charge, interpretations, checklist) comes before the citing cases.
    assert seen[0][0] != "CITES" and seen[-1][0] == "CITES"
    # Out of range or not a number: the nearest page, never an error.
    assert graph_neighbourhood("Article", article.pk, page=999, per_page=7)["page_number"] == first["pages"]
    assert graph_neighbourhood("Article", article.pk, page="x", per_page=7)["page_number"] == 1

    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    html = client.get("/graph/explore/", {"q": "264"}).content.decode()
    assert f"({everything} neighbours" in html
    data = client.get(f"/graph/neighbourhood/Article/{article.pk}.json", {"page": "1"}).json()
    assert data["total"] == everything and data["page_number"] == 1
