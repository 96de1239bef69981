"""Fixtures for the cases app: the judging corpus (committed once per session), committed
people for tests that need a second connection or a worker, and real judgment runs."""

import datetime as dt
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import transaction

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "apps" / "corpus" / "demo"
PASSWORD = "persona-password-1"


def demo_case(ext_id: str = "demo-case-001") -> dict:
    """Facts and defendants of a demo precedent (apps/corpus/demo/cases.jsonl)."""
    import json

    for line in (DEMO / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["id"] == ext_id:
            return record
    raise KeyError(ext_id)


@pytest.fixture(scope="session")
def compiled_catalogs():
    """The Chinese catalog compiled from locale/ (the .mo files are not in git; bootstrap compiles them)."""
    call_command("compilemessages", locale=["zh_Hans"], ignore_patterns=[".local", "node_modules", ".git"], verbosity=0)
    # A catalog loaded before the compile (django.setup, an earlier test) would keep the old strings.
    from django.utils.translation import trans_real
    trans_real._translations = {}
    trans_real._default = None


_trained: dict[str, Path] = {}  # kind -> artefact directory, trained once per session


def ensure_judging_corpus() -> None:
    """Put the demo corpus with search indexes, the graph and the statistical models into the
    test database (as scripts/demo.sh prepares it), unless it is there already. The models are
    trained once per session and registered again wherever the corpus is rebuilt."""
    from apps.corpus.models import Precedent, SearchIndex
    from apps.corpus.services.indexing import search_indexes_build
    from apps.graph.models import GraphBuild
    from apps.graph.services.building import graph_build
    from apps.registry.models import ModelVersion
    from apps.registry.services import model_register, statistical_models_train

    if (GraphBuild.objects.filter(status=GraphBuild.Status.DONE).exists()
            and SearchIndex.objects.filter(active=True).exists()
            and Precedent.objects.filter(ext_id="demo-case-001").exists()):
        return
    if not Precedent.objects.filter(ext_id="demo-case-001").exists():
        call_command("import_corpus", str(DEMO), "--no-progress", verbosity=0)
    search_indexes_build()
    graph_build()
    if not ModelVersion.objects.filter(active=True).exists():
        if _trained:
            for kind, directory in _trained.items():
                model_register(kind=kind, directory=directory)
        else:
            _trained.update({kind: Path(v.artefact_dir)
                             for kind, v in statistical_models_train(cases=DEMO / "cases.jsonl",
                                                                     statutes=DEMO / "statutes.jsonl",
                                                                     checklists=DEMO / "checklists.jsonl",
                                                                     extra_args=["--no-dev-split"]).items()})


@pytest.fixture(scope="module")
def judging_corpus(django_db_setup, django_db_blocker):
    """The judging corpus for the rolled-back (django_db) tests of one module.

    It is built inside a transaction that stays open for the module and is rolled back at
    its end, so no other test of the suite ever sees it; each test's own transaction nests
    inside as a savepoint.
    """
    with django_db_blocker.unblock(), transaction.atomic():
        ensure_judging_corpus()
        yield
        transaction.set_rollback(True)


@pytest.fixture
def live(django_db_setup, django_db_blocker):
    """Committed teams and users, for tests whose work happens on other connections (threads, a
    worker, a server). Everything they created is deleted afterwards."""
    from apps.accounts.models import Role, Team, User
    from apps.accounts.services import user_create
    from apps.cases.models import Case, CaseUpload

    tag = uuid.uuid4().hex[:6]
    with django_db_blocker.unblock():
        # Committed, since other connections must see it; left for the following tests of this
        # kind (pytest-django runs tests without a django_db mark last, after every rolled-back and
        # transactional test, and the test database is dropped at the end of the session).
        ensure_judging_corpus()
        team_a = Team.objects.create(name=f"Live A {tag}")
        team_b = Team.objects.create(name=f"Live B {tag}")
        staff_a = user_create(username=f"live_a_{tag}", password=PASSWORD, roles=[Role.STAFF], teams=[team_a])
        staff_b = user_create(username=f"live_b_{tag}", password=PASSWORD, roles=[Role.STAFF], teams=[team_b])
        try:
            yield SimpleNamespace(team_a=team_a, team_b=team_b, staff_a=staff_a, staff_b=staff_b)
        finally:
            Case.objects.filter(team__in=[team_a, team_b]).delete()
            CaseUpload.objects.filter(team__in=[team_a, team_b]).delete()
            User.objects.filter(pk__in=[staff_a.pk, staff_b.pk]).delete()
            Team.objects.filter(pk__in=[team_a.pk, team_b.pk]).delete()


def make_case(user, team, *, ext_id="demo-case-001", defendants=None, offence_date=dt.date(2018, 9, 14), title=""):
    from apps.cases.services.cases import case_create

    record = demo_case(ext_id)
    return case_create(user=user, team=team, facts=record["fact"], offence_date=offence_date,
                       defendants=defendants or record["defendants"],
                       title=title or f"{ext_id} {'、'.join(record['defendants'])}")


def make_run(case, user, *, strategy="statistical", ablation="full"):
    """A queued run without a Celery message (for tests that execute it themselves)."""
    from apps.cases.models import JudgmentRun

    return JudgmentRun.objects.create(case=case, requested_by=user, strategy=strategy, ablation=ablation,
                                      case_version=case.version, facts=case.facts, defendants=list(case.defendants),
                                      offence_date=case.offence_date)


@pytest.fixture
def judged_run(personas, judging_corpus):
    """A finished run of demo-case-001 (王某, 赵某) for team A, executed in-process by the real pipeline."""
    from apps.cases.services.runs import judgment_execute

    case = make_case(personas.staff_a, personas.team_a, title="王某、赵某盗窃诈骗案 alpha-marker")
    run = make_run(case, personas.staff_a)
    assert judgment_execute(run_id=run.pk, worker="test") == "done"
    run.refresh_from_db()
    return run


def review_complete(run, user):
    """What a reviewer does before an approval is accepted: open every defendant's judgment and
    decide every verified article (here with "accept the rest")."""
    from apps.review.services.reviews import review_accept_rest, review_for_run, review_open

    review = review_for_run(run)
    for result in run.results.order_by("position"):
        review_open(review=review, result=result, user=user)
        review_accept_rest(review=review, result=result, user=user)
