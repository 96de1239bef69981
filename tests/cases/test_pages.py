"""The htmx pages as a staff user uses them: intake (text or document), edits, list, runs, evidence."""

import csv
import datetime as dt
import io
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from apps.accounts.models import Role
from apps.accounts.services import user_create
from apps.cases.models import Case, CaseUpload, JudgmentRun
from apps.cases.services.runs import judgment_cancel
from tests.cases.conftest import demo_case, make_case, make_run

pytestmark = pytest.mark.django_db

FACTS = demo_case()["fact"]


def form(**fields):
    data = {"title": "", "offence_date": "2018-09-14", "defendants": "王某\n赵某", "facts": FACTS}
    data.update(fields)
    return data


def test_a_staff_user_files_a_case_from_text(personas):
    client = personas.client(personas.staff_a)
    assert client.get("/cases/new/").status_code == 200
    response = client.post("/cases/new/", form(team=personas.team_a.pk, title="王某、赵某案"))
    case = Case.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/cases/{case.pk}/"
    assert (case.title, case.defendants, case.offence_date, case.team) == ("王某、赵某案", ["王某", "赵某"],
                                                                          dt.date(2018, 9, 14), personas.team_a)
    assert case.created_by == personas.staff_a and case.upload is None


def test_an_uploaded_document_is_shown_for_confirmation_before_the_case_is_saved(personas):
    client = personas.client(personas.staff_a)
    upload = SimpleUploadedFile("起诉书.txt", ("\ufeff" + FACTS + "\r\n").encode("utf-8"), content_type="text/plain")
    response = client.post("/cases/new/", form(team=personas.team_a.pk, facts="", file=upload))
    page = response.content.decode()
    assert response.status_code == 200 and not Case.objects.exists()
    stored = CaseUpload.objects.get()
    assert stored.filename == "起诉书.txt" and stored.kind == "txt" and stored.text == FACTS
    assert 'id="upload-confirm"' in page and "撬开入户门锁" in page
    assert f'name="upload" value="{stored.pk}"' in page
    # The user corrects the extracted text and saves.
    response = client.post("/cases/new/", form(team=personas.team_a.pk, facts=FACTS + "（已核对）", upload=stored.pk))
    case = Case.objects.get()
    assert response.status_code == 302 and case.upload == stored and case.facts.endswith("（已核对）")
    assert personas.client(personas.staff_a).get(f"/cases/uploads/{stored.pk}/").status_code == 200


def test_a_binary_file_is_refused_with_a_reason(personas):
    client = personas.client(personas.staff_a)
    fake = SimpleUploadedFile("facts.pdf", b"MZ\x90\x00\x03" + b"\x00" * 200, content_type="application/pdf")
    response = client.post("/cases/new/", form(team=personas.team_a.pk, facts="", file=fake), HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    assert "could not be read" in response.content.decode() and "Windows executable" in response.content.decode()
    assert not CaseUpload.objects.exists() and not Case.objects.exists()


def test_editing_keeps_a_history_with_before_and_after(personas):
    case = make_case(personas.staff_a, personas.team_a)
    client = personas.client(personas.staff_a)
    edit = {"title": case.title, "offence_date": "2018-09-14", "defendants": "王某\n赵某\n钱某", "facts": case.facts,
            "version": 1}
    # 钱某 does not occur in the facts: nothing is saved until the clerk confirms it.
    refused = client.post(f"/cases/{case.pk}/edit/", edit, HTTP_ACCEPT_LANGUAGE="en")
    assert refused.status_code == 200 and "钱某 does not occur in the facts" in refused.content.decode()
    assert Case.objects.get(pk=case.pk).version == 1
    response = client.post(f"/cases/{case.pk}/edit/", {**edit, "confirm": "on"})
    assert response.status_code == 302
    case.refresh_from_db()
    assert case.version == 2
    history = client.get(f"/cases/{case.pk}/revisions/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="revision-2"' in history and "王某、赵某、钱某" in history and "staff_a" in history
    # A second editor who loaded version 1 is told, and nothing is overwritten.
    stale = client.post(f"/cases/{case.pk}/edit/", {"title": "old page", "offence_date": "2018-09-14",
                                                    "defendants": "王某", "facts": case.facts, "version": 1},
                        HTTP_ACCEPT_LANGUAGE="en")
    assert stale.status_code == 200 and "Someone else changed this case" in stale.content.decode()
    case.refresh_from_db()
    assert case.version == 2 and case.title != "old page"


def test_the_list_searches_filters_and_paginates_keeping_the_filters(personas, judged_run):
    for i in range(25):
        make_case(personas.staff_a, personas.team_a, title=f"批量案件 {i:02d}")
    client = personas.client(personas.staff_a)
    page = client.get("/cases/?q=批量").content.decode()
    assert page.count("批量案件") == 20 and "alpha-marker" not in page
    assert "?q=%E6%89%B9%E9%87%8F&amp;page=2" in page
    assert client.get("/cases/?q=批量&page=2").content.decode().count("批量案件") == 5
    assert "alpha-marker" in client.get("/cases/?status=done").content.decode()
    assert "批量案件" not in client.get("/cases/?status=done").content.decode()
    assert client.get("/cases/?status=none").content.decode().count("批量案件") == 20
    charge = judged_run.results.first().charges[0]
    assert "alpha-marker" in client.get(f"/cases/?charge={charge}").content.decode()
    assert "alpha-marker" not in client.get("/cases/?charge=放火罪").content.decode()
    assert "alpha-marker" in client.get("/cases/?q=alpha&date_from=2018-09-01&date_to=2018-09-30").content.decode()
    assert "alpha-marker</a>" not in client.get("/cases/?q=alpha&date_from=2019-01-01").content.decode()
    # A malformed filter is ignored, not an error.
    assert client.get("/cases/?date_from=not-a-date&team=abc").status_code == 200


def test_the_export_is_csv_and_defuses_formulas(personas):
    make_case(personas.staff_a, personas.team_a, title="=HYPERLINK(\"http://x\")")
    response = personas.client(personas.staff_a).get("/cases/export.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0][0] == "id" and rows[1][1].startswith("'=")


def _researcher(personas):
    """A staff member who is also an administrator: the run form offers them the research options."""
    return user_create(username="researcher", password="researcher-password-1", roles=[Role.STAFF, Role.ADMIN],
                       teams=[personas.team_a])


def test_starting_a_run_from_the_case_page(personas, django_capture_on_commit_callbacks):
    case = make_case(personas.staff_a, personas.team_a)
    client = personas.client(personas.staff_a)
    form_html = client.get(f"/cases/{case.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="start-run-button"' in form_html and "Ablation" not in form_html and 'name="strategy"' not in form_html
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        # A clerk's run is the full pipeline whatever the request names.
        response = client.post(f"/cases/{case.pk}/runs/", {"strategy": "statistical", "ablation": "no_auditor"})
    run = JudgmentRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/cases/runs/{run.pk}/"
    assert len(callbacks) == 1 and (run.strategy, run.ablation) == ("statistical", "full")
    page = client.get(f"/cases/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'hx-trigger="every 1s"' in page and "Waiting for a worker" in page
    researcher = personas.client(_researcher(personas))
    with django_capture_on_commit_callbacks(execute=False):
        researcher.post(f"/cases/{case.pk}/runs/", {"strategy": "statistical", "ablation": "no_auditor"})
    assert JudgmentRun.objects.latest("pk").ablation == "no_auditor"


def test_the_llm_strategy_is_shown_disabled_with_the_reason(personas):
    case = make_case(personas.staff_a, personas.team_a)
    client = personas.client(_researcher(personas))
    with override_settings(LLM_BASE_URL=""):
        page = client.get(f"/cases/{case.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
        assert re.search(r'<input[^>]*value="llm"[^>]*disabled', page)
        assert "LEXTRACE_LLM_BASE_URL" in page
        refused = client.post(f"/cases/{case.pk}/runs/", {"strategy": "llm", "ablation": "full"})
        assert refused.status_code == 302 and not JudgmentRun.objects.exists()
    with override_settings(LLM_BASE_URL="http://127.0.0.1:9/v1", LLM_MODEL="m"):
        page = client.get(f"/cases/{case.pk}/").content.decode()
        assert not re.search(r'<input[^>]*value="llm"[^>]*disabled', page)


def test_polling_stops_with_286_when_the_run_is_finished(personas, judged_run):
    client = personas.client(personas.staff_a)
    fragment = client.get(f"/cases/runs/{judged_run.pk}/", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 286
    body = fragment.content.decode()
    assert "hx-trigger" not in body and "<html" not in body and "/defendants/0/" in body
    queued = make_run(judged_run.case, personas.staff_a)
    polling = client.get(f"/cases/runs/{queued.pk}/", HTTP_HX_REQUEST="true")
    assert polling.status_code == 200 and 'hx-trigger="every 1s"' in polling.content.decode()
    judgment_cancel(run=queued, user=personas.staff_a)
    assert client.get(f"/cases/runs/{queued.pk}/", HTTP_HX_REQUEST="true").status_code == 286


def test_the_evidence_page_links_every_citation_to_its_evidence_item(personas, judged_run):
    client = personas.client(personas.staff_a)
    result = next(r for r in judged_run.results.all() if r.judged)
    url = f"/cases/runs/{judged_run.pk}/defendants/{result.position}/"
    page = client.get(url + "?all=1", HTTP_ACCEPT_LANGUAGE="en").content.decode()  # everything in one page
    cited = {int(n) for n in re.findall(r'<a class="cite" href="#ev-(\d+)"', page)}
    assert cited and cited == set(result.bundle["judgment"]["citations"])
    for n in cited:
        assert f'id="ev-{n}"' in page
    # Each cited article leads on to the text of the version in force.
    for key in result.article_keys:
        assert f'id="art-{key}"' in page and f'href="#art-{key}"' in page
    assert 'class="article-text"' in page
    spans = [i for a in result.bundle["audit"]["articles"] for i in a["items"] if i["span"]]
    assert page.count("<mark>") == len(spans)
    assert 'id="evidence-graph-data" type="application/json"' in page and "cytoscape.min.js" in page
    assert 'id="term-distribution"' in page and "R_chg" in page and 'id="costs"' in page
    # what the term stands on: the cited article's range, the circumstances, how the term was made
    basis = result.bundle["judgment"]["term_basis"]
    assert 'id="term-basis"' in page and basis["ranges"] and all(f'href="#art-{r["key"]}"' in page for r in basis["ranges"])
    assert "How the term was set" in page and all(c["label"] in page for c in basis["circumstances"])
    assert all(f"（{c['article']}）" in page for c in basis["circumstances"] if c.get("article"))
    assert result.bundle["versions"]["pipeline"] in page


def test_the_evidence_page_loads_its_heavy_parts_as_htmx_fragments(personas, judged_run):
    client = personas.client(personas.staff_a)
    result = next(r for r in judged_run.results.all() if r.judged)
    url = f"/cases/runs/{judged_run.pk}/defendants/{result.position}/"
    whole = client.get(url + "?all=1", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    # The page itself: the judgment, the verified articles, the precedents; placeholders for the rest.
    assert 'id="judgment"' in page and 'id="precedents"' in page and "cytoscape.min.js" in page
    assert 'id="evidence-graph-data"' not in page and 'id="costs"' not in page and len(page) < len(whole)
    parts = {"graph": 'id="evidence-graph"', "analysis": 'id="costs"'}
    if any(not a["passed"] for a in result.bundle["audit"]["articles"]):
        parts["rejected"] = "The Auditor agent checked these articles"
    for part, marker in parts.items():
        assert f'hx-get="?part={part}" hx-trigger="intersect once"' in page
        fragment = client.get(f"{url}?part={part}", HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="en")
        assert fragment.status_code == 200 and marker in fragment.content.decode() and marker in whole
        assert "<html" not in fragment.content.decode()
        if part == "graph":  # htmx drops <script> from swapped content: the elements are in an attribute
            assert "<script" not in fragment.content.decode() and 'data-graph="{&quot;nodes&quot;' in fragment.content.decode()
    # Without JavaScript the placeholders link to the whole page.
    assert '<noscript><p class="muted"><a href="?all=1">' in page
    assert client.get(f"{url}?part=nothing").status_code == 404
    assert personas.client(personas.staff_b).get(f"{url}?part=graph").status_code == 404


def test_the_bundle_download_is_the_json_of_every_defendant(personas, judged_run):
    response = personas.client(personas.staff_a).get(f"/cases/runs/{judged_run.pk}/bundle.json")
    payload = response.json()
    assert [b["defendant"] for b in payload["bundles"]] == ["王某", "赵某"]
    assert payload["case_version"] == 1 and payload["versions"] == judged_run.versions


def test_the_pages_speak_chinese_and_english(personas, judged_run, compiled_catalogs):
    client = personas.client(personas.staff_a)
    english = client.get("/cases/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    chinese = client.get("/cases/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "New case" in english and "Latest run" in english
    assert "新建案件" in chinese and "New case" not in chinese
    evidence = client.get(f"/cases/runs/{judged_run.pk}/defendants/0/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "审查" in evidence and "Candidate articles" not in evidence


def test_the_evidence_include_renders_a_bundle_that_failed_before_any_evidence(db):
    """Other apps include the viewer for any bundle, including one whose pipeline stopped early."""
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import evidence_context

    bundle = {"defendant": "张某", "strategy": "llm", "params": {}, "versions": {"pipeline": "lextrace-pipeline/1"},
              "research": None, "audit": None, "costs": [], "llm_records": [],
              "judgment": {"status": "model_unavailable", "message": "features: the server did not answer"}}
    with translation.override("en"):
        html = render_to_string("cases/_evidence.html", {"bundle": bundle, "ev": evidence_context(bundle)})
    assert "model unavailable" in html and "the server did not answer" in html and 'role="alert"' in html
    assert "No article was verified." in html and "Nothing was retrieved." in html


@pytest.mark.parametrize("lang, words", [
    ("en", ["Not cited in the judgment", "The judgment holds one act, judged under 第二百三十二条",
            "The Auditor agent verified it; the judgment does not cite it."]),
    ("zh-hans", ["判决未引用", "判决认定为一个行为，依可能性更大的已核验法条第二百三十二条定罪", "该条已经核验智能体核验通过，但判决未引用"]),
])
def test_a_verified_article_the_judgment_leaves_out_says_why_on_its_card(db, compiled_catalogs, lang, words):
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import evidence_context
    from worker.agents import reasons
    from worker.agents.types import ArticleAudit, Audit, Bundle, Judgment, Research, Status

    def article(pk, key, label):
        return ArticleAudit(article_pk=pk, key=key, label=label, charges=["故意杀人罪"], version_pk=pk, text="",
                            in_force=True, score=0.9, passed=True)

    # 232 cited; 234 left out with the strategy's reason; 238 left out with none (a language model's judgment)
    judgment = Judgment(status=Status.JUDGED, charges=["故意杀人罪"], article_keys=["232"], article_pks=[1],
                        not_cited=[reasons.why(reasons.JUDGMENT_NOT_CITED, key="234", article="第二百三十四条",
                                               kind="one_act", instead="第二百三十二条")])
    bundle = Bundle(case=None, defendant="吴某", strategy="statistical", params={}, versions={},
                    research=Research(focus="", features={}, query_text=""),
                    audit=Audit(articles=[article(1, "232", "第二百三十二条"), article(2, "234", "第二百三十四条"),
                                          article(3, "238", "第二百三十八条")]),
                    judgment=judgment).to_dict()
    with translation.override(lang):
        ev = evidence_context(bundle)
        html = render_to_string("cases/_evidence.html", {"bundle": bundle, "ev": ev})
    assert [bool(a.get("not_cited")) for a in ev["articles"]] == [False, True, True]
    assert all(w in html for w in words), [w for w in words if w not in html]


def test_every_pipeline_status_has_a_label():
    from apps.cases.models import RESULT_STATUS_LABELS
    from worker.agents.types import Status

    assert set(RESULT_STATUS_LABELS) == set(Status)


def test_a_failed_run_shows_its_message(personas):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=run.pk).update(status="failed", message="ImproperlyConfigured: no LLM is configured")
    page = personas.client(personas.staff_a).get(f"/cases/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="run-message"' in page and "ImproperlyConfigured: no LLM is configured" in page
    assert 'id="retry-run"' in page and 'id="cancel-run"' not in page


@pytest.mark.parametrize("lang, said", [("en", "The language model proposed 10 months"), ("zh-hans", "语言模型依据案件事实")])
def test_the_term_basis_of_a_language_model_says_the_model_proposed_the_term(lang, said):
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import _term_basis
    from worker.agents.graph_types import Term
    from worker.agents.models.sentencing import term_basis
    from worker.agents.types import Judgment, Status

    basis = term_basis("被告人张某窃取现金五千元。案发后张某主动投案。", [("264", "第二百六十四条", "处三年以下有期徒刑")], {},
                       model=None, precedent_months=(), share=0.0, term=Term(months=10), source="llm")
    with translation.override(lang):
        html = render_to_string("cases/_term_basis.html",
                                {"b": _term_basis(Judgment(status=Status.JUDGED, term=Term(months=10), term_basis=basis))})
    assert said in html and "自首" in html and 'href="#art-264"' in html and "capped" not in html
    with translation.override(lang):
        capped = render_to_string("cases/_term_basis.html", {"b": _term_basis(Judgment(
            status=Status.JUDGED, term=Term(months=36), term_basis={**basis, "capped": {"months": 36, "life": False, "death": False}}))})
    assert ("the term is capped there" if lang == "en" else "刑期以此为上限") in capped


@pytest.mark.parametrize("lang, said, unsaid", [("en", "The term model estimated 11 months from", "11 months of"),
                                                ("zh-hans", "估计为十一个月；", "有期徒刑十一个月")])
def test_the_term_models_estimate_is_a_length_the_kind_is_the_laws(compiled_catalogs, lang, said, unsaid):
    # Drunk driving (133-1) provides detention only: an estimate of 11 months is not "有期徒刑十一个月".
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import _term_basis
    from worker.agents.graph_types import Term
    from worker.agents.models.sentencing import term_basis
    from worker.agents.types import Judgment, Status

    basis = term_basis("被告人赵某醉酒后驾驶小型轿车，血液酒精含量为186mg/100ml。", [("133-1", "第一百三十三条之一",
                       "醉酒驾驶机动车的，处拘役，并处罚金。")], {}, model=Term(months=11), precedent_months=(2, 3, 5),
                       share=0.4, term=Term(months=7))
    capped = {"months": 6, "life": False, "death": False, "kind": "detention"}
    with translation.override(lang):
        html = render_to_string("cases/_term_basis.html", {"b": _term_basis(Judgment(
            status=Status.JUDGED, term=Term(months=6, kind="detention"), term_basis={**basis, "capped": capped}))})
    assert said in html and unsaid not in html
    assert ("at most 6 months of criminal detention" if lang == "en" else "最高可判拘役六个月") in html


@pytest.mark.parametrize("lang, said, fixed", [("en", "a 23 % chance of life imprisonment or death", "(10 years)"),
                                               ("zh-hans", "判处无期徒刑或死刑的可能为23 %", "（十年）")])
def test_the_term_basis_says_what_the_chance_of_life_imprisonment_did(compiled_catalogs, lang, said, fixed):
    # The term model answers the middle of every outcome (textmodel.median_sentence): above the fixed term's own
    # estimate when the facts give life imprisonment a chance; the reviewer reads that chance and that estimate.
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import _term_basis
    from worker.agents.graph_types import Term
    from worker.agents.models.sentencing import term_basis
    from worker.agents.strategies.statistical import _severe
    from worker.agents.types import Judgment, Status

    predicted = {"months": 150, "life": False, "death": False, "p_life": 0.2, "p_death": 0.03,
                 "months_estimate": 120.4, "months_linear": 90.0}
    assert _severe(predicted) == {"p": 0.23, "fixed_months": 120}
    assert _severe(dict(predicted, months=120)) is None  # the chance did not move the answer: nothing to say
    assert _severe(dict(predicted, months=122, p_life=0.01, p_death=0.0)) is None  # a rounding at a 1 % chance
    assert _severe(dict(predicted, months=0, life=True))["fixed_months"] == 120
    assert _severe(dict(predicted, months=0, death=True, p_life=0.4, p_death=0.7))["p"] == 1.0  # a chance, not 110 %
    basis = term_basis("被告人持刀将被害人刺死。", [], {}, model=Term(months=150), precedent_months=(), share=0.4,
                       term=Term(months=150), severe=_severe(predicted))
    with translation.override(lang):
        html = render_to_string("cases/_term_basis.html", {"b": _term_basis(Judgment(
            status=Status.JUDGED, term=Term(months=150), term_basis=basis))})
        plain = render_to_string("cases/_term_basis.html", {"b": _term_basis(Judgment(
            status=Status.JUDGED, term=Term(months=150), term_basis={**basis, "severe": None}))})
    assert said in html and fixed in html and said not in plain


@pytest.mark.parametrize("lang, said", [("en", "remained of the sentence being served"),
                                        ("zh-hans", "尚余有期徒刑十四年十个月未执行")])
def test_the_term_basis_says_a_term_was_raised_to_the_remaining_sentence(compiled_catalogs, lang, said):
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import _term_basis
    from worker.agents.graph_types import Term
    from worker.agents.types import Judgment, Status

    basis = {"circumstances": [], "model": {"months": 40, "life": False, "death": False}, "precedents": None,
             "term": {"months": 40, "life": False, "death": False}, "remaining": 178,
             "raised": {"months": 178, "life": False, "death": False}, "raised_remaining": True}
    judgment = Judgment(status=Status.JUDGED, term=Term(months=178), term_basis=basis)
    with translation.override(lang):
        html = render_to_string("cases/_term_basis.html", {"b": _term_basis(judgment)})
    assert said in html


@pytest.mark.parametrize("lang, said", [("en", "For the harm the facts show, 致人重伤, the cited article provides at"),
                                        ("zh-hans", "对案件事实显示的危害后果“致人重伤”，所引法条规定的最低刑为有期徒刑三年")])
def test_the_term_basis_says_a_term_was_raised_to_the_minimum_for_the_harm_shown(compiled_catalogs, lang, said):
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import _term_basis
    from apps.cases.reasons import judgment_render
    from worker.agents import reasons
    from worker.agents.graph_types import Term
    from worker.agents.types import Judgment, Status

    basis = {"circumstances": [{"label": "致人重伤", "quote": "致李某重伤二级。"}],
             "model": {"months": 20, "life": False, "death": False}, "precedents": None,
             "term": {"months": 20, "life": False, "death": False},
             "raised": {"months": 36, "life": False, "death": False}, "raised_harm": "致人重伤"}
    judgment = Judgment(status=Status.JUDGED, term=Term(months=36), term_basis=basis)
    why = {"code": reasons.JUDGMENT_TERM_RAISED, "months": 36, "predicted": 20, "harm": "致人重伤"}
    with translation.override(lang):
        html = render_to_string("cases/_term_basis.html", {"b": _term_basis(judgment)})
        reason = judgment_render([why])
    assert said in html
    assert "致人重伤" in reason and "36" in reason and ("harm" in reason or "危害后果" in reason)


@pytest.mark.parametrize("lang, said", [
    ("en", ["Drug weight", "For the weight of heroin or methamphetamine the facts state, “甲基苯丙胺52.5克”",
            "least the verified article provides for 52.5 grams of heroin or methamphetamine"]),
    ("zh-hans", ["毒品数量", "对案件事实载明的海洛因或甲基苯丙胺数量“甲基苯丙胺52.5克”，所引法条规定的最低刑为有期徒刑十五年",
                 "经核验法条对海洛因或甲基苯丙胺 52.5 克"])])
def test_the_term_basis_shows_the_drug_weight_and_the_term_it_raised(compiled_catalogs, lang, said):
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import _term_basis
    from apps.cases.reasons import judgment_render
    from worker.agents import reasons
    from worker.agents.graph_types import Term
    from worker.agents.types import Judgment, Status

    basis = {"circumstances": [], "drug": {"grams": 52.5, "text": "甲基苯丙胺52.5克"},
             "model": {"months": 40, "life": False, "death": False}, "precedents": None,
             "term": {"months": 40, "life": False, "death": False},
             "raised": {"months": 180, "life": False, "death": False}, "raised_drug": True}
    why = {"code": reasons.JUDGMENT_TERM_RAISED, "months": 180, "predicted": 40, "grams": 52.5}
    with translation.override(lang):
        html = render_to_string("cases/_term_basis.html", {"b": _term_basis(Judgment(
            status=Status.JUDGED, term=Term(months=180), term_basis=basis))})
        reason = judgment_render([why])
    assert said[0] in html and said[1] in html and said[2] in reason, reason


def test_the_term_basis_names_the_article_of_a_circumstance(compiled_catalogs):
    from django.template.loader import render_to_string
    from django.utils import translation

    basis = {"circumstances": [{"label": "自首", "quote": "案发后主动投案。", "article": "第六十七条"},
                               {"label": "取得谅解", "quote": "取得被害人谅解。"}]}
    html = render_to_string("cases/_term_basis.html", {"b": basis, "memo": True})
    assert "<strong>自首</strong><span class=\"muted\">（第六十七条）</span>" in html
    assert "<strong>取得谅解</strong>: " in html, "a circumstance no article provides for names none"
    assert "not an input of the estimate" not in html
    stopped = {"circumstances": [{"label": "犯罪中止", "quote": "自动放弃犯罪。", "ground_only": True, "article": "第二十四条"}]}
    with translation.override("zh-hans"):
        html = render_to_string("cases/_term_basis.html", {"b": stopped, "memo": True})
    assert "（不是刑期估计的输入，仅作为在法定刑以下判处的依据）" in html


@pytest.mark.parametrize("lang, said", [
    ("en", ["punishment provision", "第三百八十五条, which defines the offence, applies: the facts show its element"]),
    ("zh-hans", ["处罚条款", "规定该罪的第三百八十五条适用：案件事实显示其要件"]),
])
def test_the_reviewer_reads_what_brought_a_penalty_and_what_shows_its_offence(db, compiled_catalogs, lang, said):
    """A bribe's 386, brought by the punishment path (no precedent cited it), says so on its card, and its item
    "是否构成受贿罪" says which article shows it, in the page's language."""
    import datetime as dt

    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import evidence_context
    from tests.agents.test_punishment_provisions import BRIBERY, _bribery_graph
    from worker.agents.pipeline import adjudicate
    from worker.agents.strategies.statistical import StatisticalStrategy
    from worker.agents.testing.fixtures import FixedProbabilities
    from worker.agents.testing.memory_retriever import InMemoryRetriever
    from worker.agents.types import CaseInput

    graph = _bribery_graph(False)
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({"受贿罪": 0.9}, model_id="fake"))
    bundle = adjudicate(CaseInput(facts=BRIBERY, defendants=("黄某",), offence_date=dt.date(2016, 6, 1)), "黄某",
                        strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph)).to_dict()
    with translation.override(lang):
        ev = evidence_context(bundle)
        html = render_to_string("cases/_evidence.html", {"bundle": bundle, "ev": ev})
        penalty = next(a for a in ev["articles"] if a["key"] == "386")
        assert [str(s) for s in penalty["sources"]] == [said[0]]
    assert all(w in html for w in said), [w for w in said if w not in html]


@pytest.mark.parametrize("lang, said", [("en", "(also convicted of 诈骗罪)"), ("zh-hans", "（另犯诈骗罪）")])
def test_the_term_comparison_names_the_charges_a_precedents_term_also_punished(personas, judged_run, compiled_catalogs,
                                                                               lang, said):
    """A precedent convicted of theft and fraud has one term for both: beside a theft, its row says so."""
    from django.template.loader import render_to_string
    from django.utils import translation

    from apps.cases.evidence import evidence_context
    from apps.corpus.models import Precedent

    result = next(r for r in judged_run.results.all() if r.judged)
    bundle = dict(result.bundle)
    both, theft = (Precedent.objects.get(ext_id=e) for e in ("demo-case-064", "demo-case-003"))
    bundle["audit"] = dict(bundle["audit"], verified_cases=[theft.pk, both.pk])
    bundle["judgment"] = dict(bundle["judgment"], charges=["盗窃罪"])
    with translation.override(lang):
        ev = evidence_context(bundle)
        html = render_to_string("cases/_evidence.html", {"bundle": bundle, "ev": ev})
    assert {r["ext_id"]: r["also"] for r in ev["terms"]["rows"]} == {"demo-case-064": ["诈骗罪"], "demo-case-003": []}
    assert html.count(said) == 1
