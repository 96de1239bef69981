"""The Chinese catalog is complete on the clerk's and the reviewer's pages (issue 21, point 6).

Every page a clerk or a reviewer works with is rendered in Chinese, and every text node (and
every placeholder and aria-label) is checked for English words: a word of three or more Latin
letters fails the test unless it is a code or a name from the data (article numbers, case ids,
user and team names, file formats). The analysis details, the facts, statute texts, the model's own
words and code elements are data or developer material and are not checked.
"""

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from apps.review.services.reviews import decision_make, review_for_run, review_item_set
from tests.cases.conftest import review_complete

pytestmark = pytest.mark.django_db

# Latin words that may stand in Chinese text: names of formats, protocols and the product.
ALLOWED = {"Lextrace", "CSV", "API", "REST", "Authorization", "JSON", "DOCX", "PDF", "TXT", "SHA", "LLM", "RAG", "OpenAPI",
           "TOTP", "JavaScript", "English",
           "Team", "demo", "case", "DEMO", "JI"}
SKIPPED_CLASSES = {"analysis", "facts", "article-text", "model-words", "muted-code"}
SKIPPED_TAGS = {"script", "style", "code", "pre"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
WORD = re.compile(r"[A-Za-z]{3,}")


class _Texts(HTMLParser):
    """Collects the text a reader sees, outside the skipped elements (but the summary of an
    analysis disclosure is for every reader, so it is checked)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str | None]] = []  # per open element: its tag and "skip", "exempt" or None
        self.texts: list[str] = []

    def _skipping(self) -> bool:
        marker = next((m for _tag, m in reversed(self.stack) if m), None)
        return marker == "skip"

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        marker = "skip" if tag in SKIPPED_TAGS or classes & SKIPPED_CLASSES else None
        if tag == "summary" and self.stack and self.stack[-1][1] == "skip":
            marker = "exempt"
        if not self._skipping() and marker != "skip":
            for name in ("placeholder", "aria-label"):
                if attrs.get(name):
                    self.texts.append(attrs[name])
        if tag not in VOID:
            self.stack.append((tag, marker))

    def handle_endtag(self, tag):
        # Close back to the matching open tag (an unclosed <p> or <li> before it closes with it).
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        if data.strip() and not self._skipping():
            self.texts.append(data.strip())


def english_words(html: str, data_words: set[str]) -> list[tuple[str, str]]:
    parser = _Texts()
    parser.feed(html)
    found = []
    for text in parser.texts:
        for word in WORD.findall(text):
            if word not in ALLOWED and word not in data_words:
                found.append((word, text[:120]))
    return found


@pytest.fixture
def reviewed_run(judged_run, personas):
    """The judged run with an override (so the what-if shows) and an approval (so the memo exists)."""
    review = review_for_run(judged_run)
    result = judged_run.results.order_by("position").first()
    article = next(a for a in result.bundle["audit"]["articles"] if a["passed"] and a["items"])
    review_item_set(review=review, result=result, target="item", ref=f"{article['article_pk']}:{article['items'][0]['item_pk']}",
                    action="override", value=not article["items"][0]["satisfied"], reason="与笔录不符", user=personas.reviewer)
    review_complete(judged_run, personas.reviewer)
    decision_make(review=review, kind="approve", reason="核对无误", user=personas.reviewer)
    return judged_run


def _data_words(personas, run) -> set[str]:
    words = set()
    for text in [u.username for u in (personas.staff_a, personas.reviewer, personas.admin)] + [
            personas.team_a.name, personas.team_b.name, run.case.title, "alpha-marker"]:
        words.update(WORD.findall(text))
    return words | {"staff", "reviewer", "marker", "alpha"}


def test_the_clerks_pages_have_no_english_left(personas, reviewed_run, compiled_catalogs):
    run, case = reviewed_run, reviewed_run.case
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="zh-hans")
    urls = ["/", reverse("cases:case_list"), reverse("cases:case_new"), reverse("cases:case_detail", args=[case.pk]),
            reverse("cases:case_edit", args=[case.pk]), reverse("cases:case_revisions", args=[case.pk]),
            reverse("cases:run_detail", args=[run.pk]), reverse("cases:result_detail", args=[run.pk, 0]),
            reverse("cases:result_detail", args=[run.pk, 1]), reverse("cases:api_token"),
            reverse("accounts:team_list"), reverse("graph:explorer") + "?q=264"]
    # A form with findings to confirm, in Chinese too.
    findings = client.post(reverse("cases:case_new"), {"team": personas.team_a.pk, "offence_date": "1990-01-01",
                                                       "defendants": "孙某", "facts": case.facts}).content.decode()
    problems = {"case_new (findings)": english_words(findings, _data_words(personas, run))}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        problems[url] = english_words(response.content.decode(), _data_words(personas, run))
    problems = {url: sorted({f"{w} «{t}»" for w, t in words}) for url, words in problems.items() if words}
    assert not problems, problems


def test_the_reviewers_pages_have_no_english_left(personas, reviewed_run, compiled_catalogs):
    run = reviewed_run
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="zh-hans")
    urls = ["/", reverse("review:queue"), reverse("review:queue") + "?status=approved",
            reverse("review:review_detail", args=[run.pk]), reverse("review:review_detail", args=[run.pk]) + "?d=1",
            reverse("review:memo_preview", args=[run.pk]), reverse("cases:case_detail", args=[run.case.pk]),
            reverse("cases:run_detail", args=[run.pk]), reverse("audit:event_list")]
    problems = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        problems[url] = english_words(response.content.decode(), _data_words(personas, run))
    problems = {url: sorted({f"{w} «{t}»" for w, t in words}) for url, words in problems.items() if words}
    assert not problems, problems


def test_the_checker_finds_an_untranslated_string():
    html = '<p>已裁判</p><p>Pruned by the Auditor</p><details class="analysis"><summary>分析细节</summary>score 0.3</details>'
    assert [w for w, _ in english_words(html, set())] == ["Pruned", "the", "Auditor"]
    assert english_words('<details class="analysis"><summary>Analysis</summary></details>', set()) == [("Analysis", "Analysis")]


def test_a_refusal_reads_in_chinese_on_the_run_and_evidence_pages(personas, judging_corpus, compiled_catalogs):
    """A defendant the pipeline gives no judgment: the page says why in Chinese (the English message the pipeline
    writes for the logs and the API stays out of it)."""
    import datetime as dt

    from apps.cases.services.cases import case_create
    from apps.cases.services.runs import judgment_execute
    from tests.cases.conftest import make_run

    case = case_create(user=personas.staff_a, team=personas.team_a, offence_date=dt.date(2019, 3, 2), defendants=["孙某"],
                       facts="2019年3月2日，被告人孙某在某公园散步时与邻居闲谈，随后回家。", title="孙某散步案")
    run = make_run(case, personas.staff_a)
    assert judgment_execute(run_id=run.pk, worker="test") == "done"
    result = run.results.get()
    assert result.status != "judged" and result.message, "the pipeline refused, and says why"
    assert result.bundle["judgment"]["why"], "with a reason code"
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="zh-hans")
    for url in (reverse("cases:run_detail", args=[run.pk]), reverse("cases:result_detail", args=[run.pk, 0])):
        html = client.get(url).content.decode()
        assert result.message not in html
        assert "核验智能体未核验通过任何候选法条" in html or "检索智能体未找到候选法条" in html, url
        assert not english_words(html, _data_words(personas, run)), url


@pytest.mark.parametrize("english, chinese", [
    ("checklist item 17 is not in this evidence bundle", "核查清单要件 17 不在本证据包中"),
    ("article 264 is not in this evidence bundle", "法条 264 不在本证据包中"),
    ("precedent 9 is not in this evidence bundle", "判例 9 不在本证据包中"),
    ("unknown override target 'verdict'", "未知的修改对象 'verdict'"),
    ("this result has no audited evidence to change", "该结果没有经过核验的证据可供更改"),
    ("KeyError: 'x'", "KeyError: 'x'"),  # no template knows it: as it came
])
def test_a_refused_override_is_said_in_the_page_language(english, chinese):
    from django.utils import translation

    from apps.review.services.reviews import _override_refused

    with translation.override("zh-hans"):
        assert _override_refused(english) == chinese
    with translation.override("en"):
        assert _override_refused(english) == english
