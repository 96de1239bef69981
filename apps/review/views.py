"""Pages for reviewers. Thin: parse, call one service or selector, render or redirect.

Reads go through apps.review.selectors (the caller's teams, 404 otherwise);
every write needs the reviewer role, checked again in the services.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.permissions import role_required
from apps.accounts.selectors import team_list_for
from apps.cases.evidence import evidence_part
from apps.cases.selectors import case_get_for
from apps.core.params import int_param
from apps.review import memo
from apps.review.models import Review, ReviewItem
from apps.review.selectors import (
    QUEUE_STATUSES,
    queue_counts,
    queue_runs,
    result_at,
    review_results,
    review_run_get_for,
)
from apps.review.services.holds import legal_hold_release, legal_hold_set
from apps.review.services.memos import NoRenderer
from apps.review.services.memos import memo_export as memo_export_service
from apps.review.services.reviews import (
    ReviewConflict,
    approval_check,
    approval_current,
    approval_verify,
    decision_make,
    review_assign,
    review_for_run,
    review_accept_rest,
    review_item_change,
    review_item_undo,
    review_open,
)
from apps.review.viewmodels import coverage_context, review_item_context, review_page_context, review_part_context

PAGE_SIZE = 25


def _errors(request, exc: ValidationError) -> None:
    for message in exc.messages:
        messages.error(request, message)


def _back(run_pk: int, position: int | None = None, anchor: str = ""):
    url = reverse("review:review_detail", args=[run_pk])
    if position is not None:
        url += f"?d={position}"
    return redirect(url + (f"#{anchor}" if anchor else ""))


@role_required(Role.REVIEWER)
def queue(request):
    status = request.GET.get("status", "pending")
    status = status if status in QUEUE_STATUSES else "pending"
    assigned = request.GET.get("assigned", "")
    team = request.GET.get("team", "")
    team = int_param(team)
    runs = queue_runs(user=request.user, status=status, assigned=assigned, q=request.GET.get("q", ""), team=team)
    page = Paginator(runs, PAGE_SIZE).get_page(request.GET.get("page"))
    counts = queue_counts(user=request.user)
    return render(request, "review/queue.html", {
        "page": page, "status": status, "assigned": assigned, "team": team, "q": request.GET.get("q", ""),
        "counts": counts, "teams": team_list_for(user=request.user),
        "statuses": [(s, _label(s), counts[s]) for s in QUEUE_STATUSES],
    })


def _label(status: str) -> str:
    return {"pending": _("awaiting review"), "approved": _("approved"), "rejected": _("rejected"),
            "returned": _("returned to staff"), "all": _("all")}[status]


@role_required(Role.REVIEWER)
def review_detail(request, pk: int):
    """Read only: a changed approval is shown as no longer valid; invalidating it and recording that
    a judgment was opened are POSTs (``verify``, ``opened``)."""
    run = review_run_get_for(user=request.user, run_pk=pk)
    review = review_for_run(run)
    position = request.GET.get("d", "0")
    position = int_param(position, 0)
    part = request.GET.get("part", "")
    if part:
        return evidence_part(request, part, review_part_context(review=review, user=request.user, position=position))
    context = review_page_context(review=review, user=request.user, position=position)
    changed = approval_check(review, context["approval"])
    if changed is not None:
        context["approval"], context["stale"] = None, "; ".join(changed)
    # As on the evidence page: the rejected articles, the graph and the analysis details come as htmx
    # fragments when they come into view (?all=1: everything in one page, without JavaScript).
    context.update(lazy=not request.GET.get("all"), part_query=f"d={context['rv']['position']}&")
    return render(request, "review/review_detail.html", context)


@require_POST
@role_required(Role.REVIEWER)
def verify(request, pk: int):
    """Recompute the approval's snapshot; a difference invalidates it and returns the run to review."""
    review = _review_of(request, pk)
    invalidated = approval_verify(review)
    if invalidated is not None:
        messages.warning(request, _("The approval was invalidated: %(why)s. The run is back in review.")
                         % {"why": invalidated.invalidation_reason})
    return _back(pk)


@require_POST
@role_required(Role.REVIEWER)
def opened(request, pk: int):
    """Record that the reviewer opened one defendant's judgment (the page posts this when it shows
    it; without JavaScript the reviewer presses the button). htmx gets the coverage fragment."""
    review = _review_of(request, pk)
    result = get_object_or_404(review.run.results, position=int_param(request.POST.get("position", ""), -1))
    review_open(review=review, result=result, user=request.user)
    if not request.htmx:
        return _back(pk, result.position, "review-coverage")
    return render(request, "review/_coverage.html", coverage_context(review=review, user=request.user, result=result))


def _item_answer(request, review, position: int, target: str, ref: str, anchor: str, *, fresh=None, results=None,
                 change=None):
    """After an item action: the htmx fragments of the page (controls, what-if, coverage, messages)
    without a reload, or the page itself again for a plain form post. Only what the action can have
    changed is read again: the review's row (its version and status; ``fresh``: as the action read it
    under its lock), its items and what-if (not when ``change`` holds the what-if it computed).
    ``results``: the run's results as the view read them."""
    if not request.htmx:
        return _back(review.run_id, position, anchor)
    run = review.run
    review = fresh or Review.objects.get(pk=review.pk)
    review.run = run
    context = review_item_context(review=review, user=request.user, position=position, target=target, ref=ref,
                                  results=results, change=change)
    return render(request, "review/_item_response.html", context)


def _review_of(request, pk: int):
    return review_for_run(review_run_get_for(user=request.user, run_pk=pk))


def _version(request) -> int | None:
    value = request.POST.get("version", "")
    return int_param(value)


@require_POST
@role_required(Role.REVIEWER)
def item_set(request, pk: int):
    review = _review_of(request, pk)
    results = review_results(review)  # read once: the action's result, and every defendant for the answer
    result = result_at(results, int_param(request.POST.get("position", ""), -1))
    value = {"1": True, "0": False}.get(request.POST.get("value", ""))
    change = None
    try:
        change = review_item_change(review=review, result=result, target=request.POST.get("target", ""),
                                    ref=request.POST.get("ref", ""), action=request.POST.get("action", ""), value=value,
                                    reason=request.POST.get("reason", ""), user=request.user, version=_version(request))
    except ValidationError as exc:
        _errors(request, exc)
    except ReviewConflict as exc:
        messages.error(request, str(exc))
    return _item_answer(request, review, result.position, request.POST.get("target", ""), request.POST.get("ref", ""),
                        request.POST.get("anchor", ""), fresh=change.item.review if change else None,
                        results=results, change=change)


@require_POST
@role_required(Role.REVIEWER)
def item_undo(request, pk: int, item_pk: int):
    review = _review_of(request, pk)
    item = get_object_or_404(ReviewItem, pk=item_pk, review=review)
    try:
        review_item_undo(review=review, item=item, user=request.user, version=_version(request))
    except ReviewConflict as exc:
        messages.error(request, str(exc))
    return _item_answer(request, review, item.result.position, item.target, item.ref, request.POST.get("anchor", ""))


@require_POST
@role_required(Role.REVIEWER)
def accept_rest(request, pk: int):
    review = _review_of(request, pk)
    position = request.POST.get("position", "")
    result = get_object_or_404(review.run.results, position=int(position) if position.isdigit() else -1)
    if request.POST.get("opened") == "1":  # pressed on the page that shows this judgment
        review_open(review=review, result=result, user=request.user)
    try:
        n = review_accept_rest(review=review, result=result, user=request.user, version=_version(request))
    except ValidationError as exc:
        _errors(request, exc)
    except ReviewConflict as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, ngettext("%(n)d remaining article of %(name)s accepted.",
                                           "%(n)d remaining articles of %(name)s accepted.", n)
                         % {"n": n, "name": result.defendant})
    return _back(pk, result.position, "review-coverage")


@require_POST
@role_required(Role.REVIEWER)
def decide(request, pk: int):
    review = _review_of(request, pk)
    try:
        decision = decision_make(review=review, kind=request.POST.get("kind", ""), reason=request.POST.get("reason", ""),
                                 user=request.user, version=_version(request))
    except ValidationError as exc:
        _errors(request, exc)
    except ReviewConflict as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Decision recorded: %(kind)s.") % {"kind": decision.get_kind_display()})
    return _back(pk)


@require_POST
@role_required(Role.REVIEWER)
def assign(request, pk: int):
    review = _review_of(request, pk)
    assignee = request.user if request.POST.get("to") == "me" else None
    try:
        review_assign(review=review, user=request.user, assignee=assignee)
    except ValidationError as exc:
        _errors(request, exc)
    target = request.POST.get("next", "")
    # Only a page of this site: `next` comes from the form and could be anything (an open redirect).
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        target = reverse("review:queue")
    return redirect(target)


@role_required(Role.REVIEWER)
def memo_export(request, pk: int, fmt: str):
    review = _review_of(request, pk)
    try:
        content, content_type = memo_export_service(review=review, fmt=fmt, user=request.user, request=request)
    except NoRenderer as exc:
        return HttpResponse(str(exc), status=501, content_type="text/plain; charset=utf-8")
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="lextrace-run-{review.run_id}-memo.{fmt}"'
    return response


@role_required(Role.REVIEWER)
def memo_preview(request, pk: int):
    """The memo as a printable page (also what the PDF is rendered from)."""
    review = _review_of(request, pk)
    if approval_current(review) is None:
        raise Http404
    return render(request, "review/memo.html", memo.memo_context(review))


@require_POST
def hold(request, case_pk: int, action: str):
    case = case_get_for(user=request.user, pk=case_pk)
    try:
        if action == "set":
            legal_hold_set(case=case, reason=request.POST.get("reason", ""), user=request.user)
            messages.success(request, _("The case is now under legal hold."))
        else:
            legal_hold_release(case=case, reason=request.POST.get("reason", ""), user=request.user)
            messages.success(request, _("The legal hold was released."))
    except ValidationError as exc:
        _errors(request, exc)
    return redirect("cases:case_detail", pk=case.pk)
