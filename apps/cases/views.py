"""Pages for cases and runs. Thin: parse, call one service or selector, render.

Reads go through apps.cases.selectors (the caller's teams only, 404 otherwise);
writes need the staff role.
"""

import csv

from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import F, Prefetch
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.permissions import role_required
from apps.cases.forms import ApiTokenForm, ApiTokenIssueForm, CaseEditForm, CaseFilterForm, CaseForm, RunForm
from apps.cases.models import TERM_KIND, Case, DefendantResult
from apps.cases.evidence import evidence_part, evidence_view, term_label
from apps.cases.reasons import judgment_render
from apps.cases.selectors import (
    case_get_for,
    case_search,
    charges_union,
    latest_result_charges,
    latest_result_terms,
    result_get_for,
    run_bundle_etag,
    run_get_for,
    run_progress,
    upload_get_for,
)
from apps.cases.services.api_tokens import api_token_mint, api_token_revoke, privileged
from apps.cases.services.cases import CaseConflict
from apps.cases.services.intake import IntakeUnconfirmed, case_findings, case_intake, case_revise
from apps.cases.services.runs import judgment_cancel, judgment_request, judgment_retry
from apps.cases.services.uploads import case_upload_create
from apps.core.jobs import polled_fragment
from apps.core.params import int_param

PAGE_SIZE = 20


def _form_errors(form, exc: ValidationError) -> None:
    """Attach a service's ValidationError to the form (unknown fields become form-wide errors)."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc)


def _charge_names():
    from apps.corpus.models import Charge

    return Charge.objects.filter(official=True).values_list("name", flat=True)


# --- cases ------------------------------------------------------------------------------


def _reviewed(case_rows) -> dict:
    from apps.review.selectors import review_outcomes

    return review_outcomes([c.latest_run_id for c in case_rows if c.latest_run_id])


def _charge_cell(case, per_result: dict, reviewed: dict) -> dict:
    """The latest run's charges; once a reviewer approved it with overrides, the reviewed charges
    beside them (and the machine's charges the reviewer struck)."""
    results = per_result.get(case.pk, {})
    machine = charges_union(results.values())
    review = reviewed.get(case.latest_run_id)
    cell = {"machine": machine, "review": review, "reviewed": None, "struck": []}
    decision = review["decision"] if review else None
    if decision is not None and decision.kind == "approve":
        changed = review["results"]
        if any(r.get("changed") for r in changed.values()):
            names = charges_union(changed[rid]["charges"] if changed.get(rid, {}).get("changed") else charges
                                  for rid, charges in results.items())
            cell["reviewed"] = names
            cell["struck"] = [c for c in machine if c not in names]
    return cell


def case_list(request):
    filters = CaseFilterForm(request.GET or None, user=request.user)
    cases = case_search(user=request.user, **filters.filters()).defer("facts")  # a page of titles, not of facts
    page = Paginator(cases, PAGE_SIZE).get_page(request.GET.get("page"))
    charges = latest_result_charges([c.pk for c in page])
    reviewed = _reviewed(page)
    rows = [{"case": c, "charges": _charge_cell(c, charges, reviewed)} for c in page]
    return render(request, "cases/case_list.html", {"filters": filters, "page": page, "rows": rows,
                                                    "charge_names": _charge_names()})


def _csv_cell(value) -> str:
    text = str(value)
    # A spreadsheet would run a cell starting with these as a formula.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _terms_cells(terms: dict, review: dict | None) -> tuple[str, str]:
    """The latest run's terms per defendant ("王某：有期徒刑一年五个月；…"), and the reviewed ones once an
    approval changed them."""
    machine = "；".join(f"{name}：{text}" for name, text in terms.values())
    decision = review["decision"] if review else None
    if decision is None or decision.kind != "approve" or not any(r.get("changed") for r in review["results"].values()):
        return machine, ""
    reviewed = []
    for result_id, (name, text) in terms.items():
        changed = review["results"].get(result_id, {})
        reviewed.append(f"{name}：{(changed['term_text'] or '—') if changed.get('changed') else text}")
    return machine, "；".join(reviewed)


def case_export(request):
    filters = CaseFilterForm(request.GET or None, user=request.user)
    cases = list(case_search(user=request.user, **filters.filters()).defer("facts")[:5000])
    charges = latest_result_charges([c.pk for c in cases])
    reviewed = _reviewed(cases)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="lextrace-cases.csv"'
    response.write("\ufeff")  # so spreadsheet programs read the Chinese text as UTF-8
    writer = csv.writer(response)
    zone = timezone.get_current_timezone_name()
    terms = latest_result_terms([c.pk for c in cases])
    writer.writerow(["id", "title", "team", "offence_date", "defendants", "version", "latest_run_status",
                     "review_status", "latest_charges", "reviewed_charges", "latest_terms", "reviewed_terms",
                     f"created_at ({zone})"])
    for c in cases:
        cell = _charge_cell(c, charges, reviewed)
        review = cell["review"]
        machine_terms, reviewed_terms = _terms_cells(terms.get(c.pk, {}), review)
        # The time as the pages show it: the server's time zone (settings.TIME_ZONE), not UTC.
        created = timezone.localtime(c.created_at).strftime("%Y-%m-%d %H:%M:%S")
        writer.writerow([_csv_cell(v) for v in (
            c.pk, c.title, c.team.name, c.offence_date.isoformat(), "、".join(c.defendants), c.version,
            c.latest_status or "", review["status"] if review else "", "、".join(cell["machine"]),
            "、".join(cell["reviewed"]) if cell["reviewed"] is not None else "", machine_terms, reviewed_terms,
            created)])
    return response


def _findings_messages(request, findings) -> None:
    for finding in findings:
        messages.warning(request, finding.message)


@role_required(Role.STAFF)
def case_new(request):
    form = CaseForm(request.POST or None, request.FILES or None, user=request.user)
    upload, unconfirmed = None, []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            if data["file"]:
                upload = case_upload_create(user=request.user, team=data["team"], data=data["file"].read(),
                                            filename=data["file"].name)
                # Nothing is saved as a case yet: the user checks the extracted text first.
                form = CaseForm(user=request.user, initial={
                    "team": data["team"].pk, "title": data["title"], "offence_date": data["offence_date"],
                    "defendants": "\n".join(data["defendants"]), "facts": upload.text, "upload": upload.pk})
                messages.info(request, _("Check the text extracted from %(name)s, correct it if needed, "
                                         "then save the case.") % {"name": upload.filename})
                return render(request, "cases/case_form.html", {"form": form, "upload": upload, "confirm": True})
            if data["upload"]:
                upload = upload_get_for(user=request.user, pk=data["upload"])
            case, warnings = case_intake(user=request.user, team=data["team"], title=data["title"],
                                         facts=data["facts"], offence_date=data["offence_date"],
                                         defendants=data["defendants"], upload=upload, confirmed=data["confirm"])
        except IntakeUnconfirmed as exc:
            unconfirmed = exc.findings
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, _("Case saved."))
            _findings_messages(request, warnings)
            return redirect("cases:case_detail", pk=case.pk)
    elif request.method == "POST" and form.data.get("upload"):
        pk = str(form.data["upload"])
        upload = upload_get_for(user=request.user, pk=int_param(pk)) if int_param(pk) is not None else None
    return render(request, "cases/case_form.html", {"form": form, "upload": upload, "confirm": upload is not None,
                                                    "unconfirmed": unconfirmed})


def _case_runs(case: Case) -> dict:
    from apps.review.selectors import review_outcomes

    runs = list(case.runs.select_related("requested_by").defer("facts").prefetch_related(
        Prefetch("results", queryset=DefendantResult.objects.defer("bundle"))))
    reviewed = review_outcomes([r.pk for r in runs])
    # While a run is queued or running, the runs table follows it (htmx) without a reload.
    return {"case": case, "runs": [{"run": r, "review": reviewed.get(r.pk)} for r in runs],
            "runs_finished": all(r.finished for r in runs)}


def case_detail(request, pk: int):
    case = case_get_for(user=request.user, pk=pk)
    runs = _case_runs(case)
    if request.htmx and request.GET.get("part") == "runs":
        return polled_fragment(request, "cases/_case_runs.html", runs, finished=runs["runs_finished"])
    return render(request, "cases/case_detail.html", {
        **runs, "run_form": RunForm(research=request.user.has_role(Role.ADMIN)),
        "can_edit": request.user.has_role(Role.STAFF), "findings": case_findings(case),
        "revisions": case.revisions.select_related("changed_by")[:5]})


@role_required(Role.STAFF)
def case_edit(request, pk: int):
    case = case_get_for(user=request.user, pk=pk)
    initial = {"title": case.title, "offence_date": case.offence_date, "defendants": "\n".join(case.defendants),
               "facts": case.facts, "version": case.version}
    form = CaseEditForm(request.POST or None, initial=initial)
    unconfirmed = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            updated, warnings = case_revise(case=case, user=request.user, expected_version=data["version"],
                                            title=data["title"], facts=data["facts"],
                                            offence_date=data["offence_date"], defendants=data["defendants"],
                                            confirmed=data["confirm"])
        except IntakeUnconfirmed as exc:
            unconfirmed = exc.findings
        except CaseConflict as exc:
            form.add_error(None, exc)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            if updated.version == case.version:
                messages.info(request, _("Nothing changed."))
            else:
                messages.success(request, _("Saved as version %(v)d.") % {"v": updated.version})
                _findings_messages(request, warnings)
            return redirect("cases:case_detail", pk=case.pk)
    return render(request, "cases/case_edit.html", {"case": case, "form": form, "unconfirmed": unconfirmed})


def case_revisions(request, pk: int):
    case = case_get_for(user=request.user, pk=pk)
    revisions = []
    for r in case.revisions.select_related("changed_by"):
        before = r.before or {}
        revisions.append({"revision": r, "changes": [
            {"field": f, "label": Case._meta.get_field(f).verbose_name, "before": before.get(f),
             "after": r.after.get(f)}
            for f in r.changed_fields]})
    return render(request, "cases/case_revisions.html", {"case": case, "revisions": revisions})


def upload_detail(request, pk: int):
    upload = upload_get_for(user=request.user, pk=pk)
    return render(request, "cases/upload_detail.html", {"upload": upload,
                                                        "cases": upload.cases.filter(team=upload.team)})


# --- runs --------------------------------------------------------------------------------


@require_POST
@role_required(Role.STAFF)
def run_create(request, pk: int):
    case = case_get_for(user=request.user, pk=pk)
    # Research options (strategy, ablation, retrieval mode) only for administrators; a clerk's run is the full pipeline.
    form = RunForm(request.POST, research=request.user.has_role(Role.ADMIN))
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect("cases:case_detail", pk=case.pk)
    try:
        run = judgment_request(case=case, user=request.user, **form.parameters())
    except ValidationError as exc:
        for error in exc.messages:
            messages.error(request, error)
        return redirect("cases:case_detail", pk=case.pk)
    return redirect("cases:run_detail", pk=run.pk)


def _run_context(run, user) -> dict:
    from apps.review.selectors import review_outcomes

    review = review_outcomes([run.pk]).get(run.pk)
    results = []
    for r in run.results.defer("bundle").annotate(why=F("bundle__judgment__why"), kind=TERM_KIND):
        reviewed = (review or {}).get("results", {}).get(r.pk) if review and review["decision"] else None
        term = term_label(r.term_months, r.life, r.death, r.term_kind) if r.judged else ""
        results.append({"result": r, "term": term,
                        "reviewed": reviewed, "message": judgment_render(r.why, r.message)})
    return {"run": run, "progress": run_progress(run=run), "results": results, "review": review,
            "attempts": run.attempts.all(), "finished": run.finished, "can_edit": user.has_role(Role.STAFF),
            "can_review": user.has_role(Role.REVIEWER)}


def run_detail(request, pk: int):
    run = run_get_for(user=request.user, pk=pk)
    context = _run_context(run, request.user)
    if request.htmx:
        return polled_fragment(request, "cases/_run_status.html", context, finished=context["finished"])
    return render(request, "cases/run_detail.html", context)


@require_POST
@role_required(Role.STAFF)
def run_cancel(request, pk: int):
    run = run_get_for(user=request.user, pk=pk)
    try:
        run = judgment_cancel(run=run, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.info(request, _("Run cancelled.") if run.finished
                      else _("Cancellation requested; the run stops at its next stage."))
    return redirect("cases:run_detail", pk=run.pk)


@require_POST
@role_required(Role.STAFF)
def run_retry(request, pk: int):
    run = run_get_for(user=request.user, pk=pk)
    try:
        new = judgment_retry(run=run, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("cases:run_detail", pk=run.pk)
    messages.info(request, _("A new run was queued with the same inputs."))
    return redirect("cases:run_detail", pk=new.pk)


def run_bundle(request, pk: int):
    """The evidence bundles of a run as one JSON download; a conditional GET (If-None-Match) of an
    unchanged run is a 304 without reading the bundles."""
    run = run_get_for(user=request.user, pk=pk)
    etag = run_bundle_etag(run=run)
    if (not_modified := get_conditional_response(request, etag=etag)) is not None:
        not_modified["ETag"] = etag  # a 304 repeats the validator (RFC 9110 §15.4.5)
        return not_modified
    payload = {"run": run.pk, "case": run.case_id, "case_version": run.case_version, "status": run.status,
               "strategy": run.strategy, "ablation": run.ablation, "versions": run.versions,
               "bundles": [r.bundle for r in run.results.all()]}
    response = JsonResponse(payload, json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="lextrace-run-{run.pk}.json"'
    response["ETag"] = etag
    # Case data is never stored by a browser or a proxy (private, no-store, K-findings of the security
    # round); a client that keeps its own copy sends If-None-Match with the ETag and gets a 304.
    patch_cache_control(response, private=True, no_store=True)
    return response


def result_detail(request, pk: int, position: int):
    result = result_get_for(user=request.user, run_pk=pk, position=position)
    context = {"result": result, "run": result.run, "bundle": result.bundle, "ev": evidence_view(result.bundle)}
    part = request.GET.get("part", "")
    if part:
        return evidence_part(request, part, context)
    # ?all=1: everything in one page (the no-JavaScript link, printing).
    context.update(siblings=result.run.results.only("position", "defendant", "status"), lazy=not request.GET.get("all"))
    return render(request, "cases/result_detail.html", context)


# --- API tokens -------------------------------------------------------------------------------


def _token_page(request, form, *, issued=None, secret="", issue_form=None, status=200):
    from apps.accounts.models import ApiToken

    is_admin = request.user.has_role(Role.ADMIN)
    if is_admin and issue_form is None:
        issue_form = ApiTokenIssueForm()
    return render(request, "cases/api_token.html", {
        "tokens": ApiToken.objects.filter(user=request.user).select_related("created_by"),
        "form": form, "may_mint": not privileged(request.user), "issued": issued, "secret": secret,
        "is_admin": is_admin, "issue_form": issue_form}, status=status)


def api_token(request):
    """The caller's API tokens: list, mint (staff for themselves), revoke. A new secret is shown once."""
    from apps.accounts.models import ApiToken

    form = ApiTokenForm(request.POST if request.POST.get("action") == "mint" else None)
    if request.method == "POST" and request.POST.get("action") == "revoke":
        token_id = request.POST.get("token", "")
        token = ApiToken.objects.filter(user=request.user, pk=int_param(token_id, -1)).first()
        if token is None:
            raise Http404
        try:
            api_token_revoke(token=token, user=request.user)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, _("The token %(name)s was revoked; it no longer works.") % {"name": token.name})
        return redirect("cases:api_token")
    if request.method == "POST" and form.is_valid():
        try:
            token, secret = api_token_mint(user=request.user, issuer=request.user, **form.cleaned_data)
        except PermissionDenied as exc:
            messages.error(request, str(exc))
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            return _token_page(request, ApiTokenForm(), issued=token, secret=secret, status=201)
    return _token_page(request, form, status=400 if form.errors else 200)


@role_required(Role.ADMIN)
def api_token_issue(request):
    """Administrators issue a token for any user (the only way reviewers and administrators get one)."""
    form = ApiTokenIssueForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        user = data.pop("username")
        try:
            token, secret = api_token_mint(user=user, issuer=request.user, **data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            return _token_page(request, ApiTokenForm(), issued=token, secret=secret, issue_form=ApiTokenIssueForm(),
                               status=201)
    return _token_page(request, ApiTokenForm(), issue_form=form, status=400 if form.errors else 200)
