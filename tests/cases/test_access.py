"""Who may see and do what: another team's cases, runs, evidence, uploads and API objects are 404,
and no list, search, export or htmx fragment mentions them."""

import pytest

from apps.cases.models import Case, JudgmentRun
from apps.cases.services.uploads import case_upload_create
from tests.conftest import api_token_for

pytestmark = pytest.mark.django_db

MARKER = "alpha-marker"  # in the title of team A's case (fixture judged_run)


def case_table(html: str) -> str:
    """The result table of the case list (the search box echoes the query elsewhere on the page)."""
    return html.split('id="case-table"', 1)[1].split("</table>", 1)[0]


@pytest.fixture
def team_a_objects(judged_run, personas):
    upload = case_upload_create(user=personas.staff_a, team=personas.team_a, filename="facts.txt",
                                data="被告人王某盗窃 alpha-marker 手机一部。".encode())
    case = judged_run.case
    return {"case": case, "run": judged_run, "upload": upload}


def page_urls(o):
    case, run, upload = o["case"], o["run"], o["upload"]
    return [
        f"/cases/{case.pk}/", f"/cases/{case.pk}/edit/", f"/cases/{case.pk}/revisions/",
        f"/cases/runs/{run.pk}/", f"/cases/runs/{run.pk}/bundle.json",
        f"/cases/runs/{run.pk}/defendants/0/", f"/cases/runs/{run.pk}/defendants/1/",
        f"/cases/uploads/{upload.pk}/",
    ]


def api_urls(o):
    case, run = o["case"], o["run"]
    return [f"/api/v1/cases/{case.pk}/", f"/api/v1/cases/{case.pk}/runs/", f"/api/v1/runs/{run.pk}/",
            f"/api/v1/runs/{run.pk}/bundle/"]


def test_the_owning_team_sees_everything(team_a_objects, personas):
    client = personas.client(personas.staff_a)
    for url in page_urls(team_a_objects):
        assert client.get(url).status_code == 200, url
    for url in api_urls(team_a_objects):
        assert client.get(url).status_code == 200, url


def test_another_team_gets_404_for_every_page_fragment_and_action(team_a_objects, personas):
    client = personas.client(personas.staff_b)
    for url in page_urls(team_a_objects):
        assert client.get(url).status_code == 404, url
    run, case = team_a_objects["run"], team_a_objects["case"]
    # The htmx polling fragment too.
    assert client.get(f"/cases/runs/{run.pk}/", HTTP_HX_REQUEST="true").status_code == 404
    # Writes: 404 before anything happens.
    assert client.post(f"/cases/{case.pk}/runs/", {"strategy": "statistical", "ablation": "full"}).status_code == 404
    assert client.post(f"/cases/runs/{run.pk}/cancel/").status_code == 404
    assert client.post(f"/cases/runs/{run.pk}/retry/").status_code == 404
    assert client.post(f"/cases/{case.pk}/edit/", {"title": "x", "facts": "x", "offence_date": "2018-01-01",
                                                   "defendants": "x", "version": case.version}).status_code == 404
    case.refresh_from_db()
    assert case.version == 1 and JudgmentRun.objects.filter(case=case).count() == 1


def test_no_list_search_or_export_leaks_another_teams_case(team_a_objects, personas):
    client = personas.client(personas.staff_b)
    for url in ("/cases/", f"/cases/?q={MARKER}", "/cases/?q=王某", "/cases/?status=done", "/cases/?charge=盗窃罪",
                f"/cases/?team={personas.team_a.pk}", "/cases/export.csv", f"/cases/export.csv?q={MARKER}"):
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode("utf-8-sig")
        assert MARKER not in (body if url.startswith("/cases/export") else case_table(body)), url
    # The owner finds it by title, facts and defendant.
    owner = personas.client(personas.staff_a)
    for q in (MARKER, "撬开入户门锁", "赵某"):
        assert MARKER in case_table(owner.get(f"/cases/?q={q}").content.decode()), q


def test_another_teams_upload_cannot_be_attached_to_a_new_case(team_a_objects, personas):
    client = personas.client(personas.staff_b)
    response = client.post("/cases/new/", {"team": personas.team_b.pk, "title": "t", "offence_date": "2018-01-01",
                                           "defendants": "张某", "facts": "被告人张某盗窃。",
                                           "upload": team_a_objects["upload"].pk})
    assert response.status_code == 404
    assert not Case.objects.filter(team=personas.team_b).exists()


def test_a_case_cannot_be_filed_under_another_team(personas):
    client = personas.client(personas.staff_b)
    response = client.post("/cases/new/", {"team": personas.team_a.pk, "offence_date": "2018-01-01",
                                           "defendants": "张某", "facts": "被告人张某盗窃。"})
    assert response.status_code == 200 and not Case.objects.exists()
    api = client.post("/api/v1/cases/", {"team": personas.team_a.pk, "offence_date": "2018-01-01",
                                         "defendants": ["张某"], "facts": "被告人张某盗窃。"},
                      content_type="application/json")
    assert api.status_code == 400 and "team" in api.json()
    # The same answer as for a team that does not exist at all.
    missing = client.post("/api/v1/cases/", {"team": 999999, "offence_date": "2018-01-01", "defendants": ["张某"],
                                             "facts": "被告人张某盗窃。"}, content_type="application/json")
    assert missing.json()["team"] == [api.json()["team"][0].replace(str(personas.team_a.pk), "999999")]


def test_the_api_answers_404_to_another_team_with_a_token(team_a_objects, personas):
    token = api_token_for(personas.staff_b)
    client = personas.client(HTTP_AUTHORIZATION=f"Token {token}")
    for url in api_urls(team_a_objects):
        assert client.get(url).status_code == 404, url
    run, case = team_a_objects["run"], team_a_objects["case"]
    assert client.post(f"/api/v1/runs/{run.pk}/cancel/").status_code == 404
    assert client.post(f"/api/v1/runs/{run.pk}/retry/").status_code == 404
    assert client.post(f"/api/v1/cases/{case.pk}/runs/", {}, content_type="application/json").status_code == 404
    assert client.patch(f"/api/v1/cases/{case.pk}/", {"version": 1, "title": "x"},
                        content_type="application/json").status_code == 404
    for url in ("/api/v1/cases/", f"/api/v1/cases/?q={MARKER}", f"/api/v1/cases/?team={personas.team_a.pk}"):
        body = client.get(url)
        assert body.status_code == 200 and body.json()["count"] == 0, url
    assert JudgmentRun.objects.filter(case=case).count() == 1


def test_a_reviewer_of_both_teams_reads_but_does_not_write(team_a_objects, personas):
    client = personas.client(personas.reviewer)
    for url in page_urls(team_a_objects):
        if url.endswith("/edit/"):
            assert client.get(url).status_code == 403
        else:
            assert client.get(url).status_code == 200, url
    case = team_a_objects["case"]
    assert client.post(f"/cases/{case.pk}/runs/", {"strategy": "statistical", "ablation": "full"}).status_code == 403
    assert client.get("/cases/new/").status_code == 403
    assert client.post("/api/v1/cases/", {}, content_type="application/json").status_code == 403


def test_an_admin_outside_the_teams_sees_no_case(team_a_objects, personas):
    client = personas.client(personas.admin)
    for url in page_urls(team_a_objects) + api_urls(team_a_objects):
        assert client.get(url).status_code in (403, 404), url
    assert MARKER not in case_table(client.get("/cases/").content.decode())


def test_anonymous_api_calls_are_refused(team_a_objects, client):
    for url in api_urls(team_a_objects) + ["/api/v1/cases/", "/api/schema/"]:
        assert client.get(url).status_code in (401, 403), url
    assert client.get("/api/docs/").status_code == 302
