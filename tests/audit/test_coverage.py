"""Every state-changing service appends an audit event (INV-5), found by reading the code.

The test walks every service module (apps/*/services.py, apps/*/services/*.py, and the few
modules outside them that hold state changes: MODULES_BEYOND_SERVICES) and, for each public
function, decides from its syntax tree:

* whether it **writes**: an ORM write (``save``, ``delete``, ``create``, ``bulk_create``,
  ``get_or_create``, ``update_or_create``, ``bulk_update``, a queryset's ``update``, a related
  manager's ``set/add/remove/clear``) or SQL that starts with INSERT, UPDATE, DELETE, TRUNCATE,
  CREATE, DROP or ALTER, itself or through a function it calls (in its module, or imported from
  another service module);
* whether it **audits**: calls ``audit_append``, itself or through such a function.

A public function that writes and does not audit fails the test unless it is in EXEMPT, with the
reason it needs no event of its own. A new service is covered the moment it exists: nobody has to
remember to add it here. (The detection is syntactic: a write hidden behind a call into a module
outside the walk is not seen; the services call the ORM directly, so the walk sees theirs.)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES_BEYOND_SERVICES = ["apps/accounts/second_factor.py", "apps/accounts/lockout.py", "apps/registry/training.py",
                           "apps/core/jobs.py"]
# Adapters the services write through: read for what they write, not checked themselves.
ADAPTERS = ["apps/graph/age.py"]

# Reviewed exemptions: a public function that writes but appends no event itself, and why.
EXEMPT = {
    # Worker-side bookkeeping of a run: the user's request (run.request / run.retry / run.cancel) is
    # the audited act; attempts, progress events and results are the run's own record of execution.
    "apps.cases.services.runs.judgment_execute": "worker execution of an audited run.request",
    "apps.cases.services.runs.run_claimed": "worker claim of an audited run.request",
    # The queued upload of a corpus file: its outcome is audited when the worker finishes it
    # (corpus.import, corpus.import_failed, corpus.import_duplicate).
    "apps.corpus.services.uploads.corpus_upload": "the queued import's outcome is audited by corpus_import",
    "apps.corpus.services.importing.import_batch_create": "the batch of an import whose outcome corpus_import audits",
    **{f"apps.corpus.services.appliers.apply_{kind}": "writes the corpus inside corpus_import's audited transaction"
       for kind in ("statutes", "interpretations", "checklists", "cases", "charge_table", "case_plan", "statute_plan")},
    # Derived data, rebuilt from audited inputs: search indexes, the graph and its projection, statistics.
    "apps.corpus.services.indexing.bm25_index_build": "derived search index over the audited corpus",
    "apps.corpus.services.indexing.dense_index_build": "derived search index over the audited corpus",
    "apps.corpus.services.indexing.dense_index_from_vectors": "derived search index over the audited corpus",
    "apps.corpus.services.indexing.search_indexes_build": "derived search indexes over the audited corpus",
    "apps.corpus.services.indexing.search_indexes_follow": "derived search indexes brought up to an audited import",
    "apps.corpus.services.indexing.abandoned_builds_discard": "cleans up a derived index a killed build left",
    "apps.corpus.services.indexing.search_index_drop": "removes an inactive derived index",
    "apps.graph.services.building.graph_build": "derived graph of the audited corpus",
    "apps.graph.services.building.graph_cases_add": "derived graph of the audited corpus",
    "apps.graph.services.projection.graph_project_all": "AGE projection of the relational tables",
    "apps.graph.services.projection.graph_sync": "AGE projection of the relational tables",
    "apps.graph.services.following.graph_follow_import": "runs inside the audited corpus.import transaction",
    # Evaluations and training: research runs whose results are stored as data; activating a model
    # (what changes judgments) is audited (model.activate).
    "apps.evaluation.services.evaluating.evaluation_create": "an evaluation run is research data, not a decision",
    "apps.evaluation.services.evaluating.evaluation_claim": "an evaluation run is research data",
    "apps.evaluation.services.evaluating.evaluation_run_chunk": "an evaluation run is research data",
    "apps.evaluation.services.evaluating.evaluation_upload": "an evaluation run is research data",
    "apps.evaluation.services.evaluating.evaluation_mark_reference": "marks the comparison baseline of research runs",
    "apps.evaluation.services.evaluating.evaluation_execute": "an evaluation run is research data",
    "apps.registry.training.training_request": "a training run is inactive until its gate activates it (audited)",
    # Review internals called inside audited transactions.
    "apps.review.services.reviews.whatif_compute": "runs inside the audited review.override / review.undo",
    "apps.review.services.reviews.review_for_run": "creates the empty review row of a finished run when first opened",
    # The status bookkeeping of every job kind (apps/core/jobs.py): what a user asked for (run.request,
    # corpus.import_confirm …) and what it led to (corpus.import, model.activate …) are audited by the
    # kind's services that call these.
    "apps.core.jobs.job_claim": "a worker takes an audited request's job",
    "apps.core.jobs.job_finish": "records a job's end; the kind's service audits what it changed",
    # Operational bookkeeping with no user-visible state.
    "apps.core.services.worker_ping_request": "a health round trip",
    "apps.core.services.worker_ping_answer": "a health round trip",
    "apps.audit.services.audit_append": "it is the audit trail's writer",
    "apps.accounts.second_factor.enrolment_device": "an unconfirmed device; its confirmation is audited",
}

WRITE_METHODS = {"save", "delete", "create", "bulk_create", "bulk_update", "get_or_create", "update_or_create"}
QUERYSET_SOURCES = {"objects", "filter", "exclude", "all", "select_for_update", "using"}
RELATED_MANAGER_WRITES = {"set", "add", "remove", "clear"}
# Receivers whose .set/.delete/.add are not the database's (a cache, a Redis client, a pipeline).
NOT_THE_DATABASE = {"cache", "client", "pipe", "redis", "default_storage", "os", "shutil", "path", "Path"}
SQL_WRITES = ("INSERT", "UPDATE", "DELETE", "TRUNCATE", "CREATE", "DROP", "ALTER")


@dataclass
class Function:
    qualname: str
    public: bool
    writes: bool = False
    audits: bool = False
    calls: set[str] = field(default_factory=set)


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def service_modules() -> list[Path]:
    found = sorted(ROOT.glob("apps/*/services.py")) + sorted(p for p in ROOT.glob("apps/*/services/*.py")
                                                             if p.name != "__init__.py")
    return found + [ROOT / m for m in MODULES_BEYOND_SERVICES if (ROOT / m).exists()]


def _root_name(node) -> str:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _queryset_receiver(node) -> bool:
    """Is ``node`` (what .update is called on) a queryset: X.objects..., or a chain of filter()/all()…?"""
    while isinstance(node, (ast.Attribute, ast.Call)):
        if isinstance(node, ast.Attribute) and node.attr in QUERYSET_SOURCES:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in QUERYSET_SOURCES:
            return True
        node = node.func if isinstance(node, ast.Call) else node.value
    return False


def _sql_text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return ""


def is_write(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if _root_name(func.value) in NOT_THE_DATABASE:
        return False
    if func.attr in WRITE_METHODS:
        return True
    if func.attr == "update":
        return _queryset_receiver(func.value)
    if func.attr in RELATED_MANAGER_WRITES:
        return isinstance(func.value, ast.Attribute)  # obj.teams.set(...), not a local set's .add
    if func.attr == "execute" and call.args:
        return _sql_text(call.args[0]).lstrip().upper().startswith(SQL_WRITES)
    return False


def analyse(source: str, module: str) -> dict[str, Function]:
    """The module's top-level functions with what they do themselves and whom they call."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("apps."):
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    functions: dict[str, Function] = {}
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        fn = Function(qualname=f"{module}.{node.name}", public=not node.name.startswith("_"))
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.module.startswith("apps."):
                for alias in inner.names:
                    imported.setdefault(alias.asname or alias.name, f"{inner.module}.{alias.name}")
            if not isinstance(inner, ast.Call):
                continue
            if is_write(inner):
                fn.writes = True
            name = inner.func.id if isinstance(inner.func, ast.Name) else ""
            if name == "audit_append":
                fn.audits = True
            elif name:
                fn.calls.add(name)
            elif isinstance(inner.func, ast.Attribute) and isinstance(inner.func.value, ast.Name):
                fn.calls.add(f"{inner.func.value.id}.{inner.func.attr}")  # module.function
        functions[node.name] = fn
    def resolve(call: str) -> str | None:
        head, _dot, attr = call.partition(".")
        if attr:
            return f"{imported[head]}.{attr}" if head in imported else None
        return f"{module}.{call}" if call in functions else imported.get(call)

    for fn in functions.values():
        fn.calls = {r for r in map(resolve, fn.calls) if r}
    return functions


def closure(functions: dict[str, Function]) -> None:
    """Propagate writes and audits along calls until nothing changes."""
    changed = True
    while changed:
        changed = False
        for fn in functions.values():
            for callee in fn.calls:
                other = functions.get(callee)
                if other is None:
                    continue
                if other.writes and not fn.writes:
                    fn.writes = changed = True
                if other.audits and not fn.audits:
                    fn.audits = changed = True


def all_functions(sources: dict[str, str], adapters: dict[str, str] | None = None) -> dict[str, Function]:
    functions: dict[str, Function] = {}
    for module, source in {**(adapters or {}), **sources}.items():
        found = analyse(source, module).values()
        for fn in found:
            fn.public = fn.public and module in sources
        functions.update({f.qualname: f for f in found})
    closure(functions)
    return functions


def unaudited(functions: dict[str, Function]) -> list[str]:
    return sorted(q for q, f in functions.items() if f.public and f.writes and not f.audits and q not in EXEMPT)


def walked() -> dict[str, Function]:
    return all_functions({_module_name(p): p.read_text(encoding="utf-8") for p in service_modules()},
                         {_module_name(ROOT / a): (ROOT / a).read_text(encoding="utf-8") for a in ADAPTERS})


def test_every_state_changing_service_appends_an_audit_event():
    functions = walked()
    assert len([f for f in functions.values() if f.public]) > 60, "the walk found too few services to be real"
    missing = unaudited(functions)
    assert not missing, ("these services change state but append no audit event; audit the change "
                         "(apps.audit.services.audit_append in its transaction) or add a reviewed exemption:\n"
                         + "\n".join(missing))


def test_the_exemptions_name_real_writing_functions():
    """An exemption for a function that was removed, renamed or no longer writes is dead weight."""
    functions = walked()
    stale = sorted(q for q in EXEMPT if q not in functions or not functions[q].public or not functions[q].writes
                   or functions[q].audits)
    assert not stale, f"remove these exemptions: {stale}"


@pytest.mark.parametrize("action, qualname", [
    ("run.cancel", "apps.cases.services.runs.judgment_cancel"),
    ("api_token.mint", "apps.cases.services.api_tokens.api_token_mint"),
    ("api_token.revoke", "apps.cases.services.api_tokens.api_token_revoke"),
    ("case.upload", "apps.cases.services.uploads.case_upload_create"),
    ("case.upload_purge", "apps.cases.services.uploads.case_uploads_purge_unconfirmed"),
    ("corpus.import", "apps.corpus.services.importing.corpus_import"),
    ("review.memo_export", "apps.review.services.memos.memo_export"),
    ("case.hold", "apps.review.services.holds.legal_hold_set"),
    ("review.assign", "apps.review.services.reviews.review_assign"),
])
def test_the_services_the_issue_names_are_walked_and_audit(action, qualname):
    functions = walked()
    assert qualname in functions and functions[qualname].audits, qualname


NEW_SERVICE = '''
from django.db import transaction
from apps.audit.services import audit_append
from apps.cases.models import Case

def case_archive(*, case, user):
    Case.objects.filter(pk=case.pk).update(title="archived")

def case_rename(*, case, user, title):
    with transaction.atomic():
        _rename(case, title)
        audit_append(action="case.rename", obj=case, actor=user)

def _rename(case, title):
    case.title = title
    case.save()

def case_touch(*, case):
    _rename(case, case.title)

def case_titles(*, user):
    return list(Case.objects.filter(team__members=user).values_list("title", flat=True))
'''


def test_the_check_fails_for_a_new_service_that_forgets_its_event():
    """The control: a module with one audited write, two unaudited ones (direct and through a
    helper) and a read; exactly the two unaudited writes are reported."""
    functions = all_functions({"apps.example.services.cases": NEW_SERVICE})
    assert unaudited(functions) == ["apps.example.services.cases.case_archive", "apps.example.services.cases.case_touch"]
