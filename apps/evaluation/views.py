from django.contrib import messages
from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.permissions import role_required
from apps.core.jobs import polled_fragment
from apps.core.params import int_param
from apps.evaluation import selectors
from apps.evaluation.forms import EvaluationForm
from apps.evaluation.models import EvaluationRun
from apps.evaluation.services.evaluating import DatasetError, evaluation_mark_reference, evaluation_upload, metrics_write


def run_list(request):
    form = EvaluationForm()
    if request.method == "POST":
        if not request.user.has_role(Role.ADMIN):
            raise Http404
        form = EvaluationForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                run = evaluation_upload(data=upload.read(), filename=upload.name, user=request.user,
                                        **{k: form.cleaned_data[k] for k in ("strategy", "ablation", "limit", "label")})
            except DatasetError as exc:
                form.add_error("file", str(exc))
            else:
                messages.info(request, _("Evaluation queued."))
                return redirect("evaluation:run_detail", pk=run.pk)
    page = Paginator(EvaluationRun.objects.select_related("created_by"), 25).get_page(request.GET.get("page"))
    return render(request, "evaluation/run_list.html", {"page": page, "form": form, "reference": selectors.reference_run()})


def run_detail(request, pk: int):
    run = get_object_or_404(EvaluationRun, pk=pk)
    if request.htmx:
        # Finished: the whole page is out of date (metrics, cases), so htmx reloads it.
        return polled_fragment(request, "evaluation/_progress.html", {"run": run, "reload": run.finished},
                               finished=run.finished, reload_when_finished=True)
    outcome = request.GET.get("outcome", "")
    page = Paginator(selectors.cases_page_queryset(run, outcome), 50).get_page(request.GET.get("page"))
    reference = selectors.reference_run()
    context = {"run": run, "page": page, "outcome": outcome, "reference": reference,
               "categories": selectors.category_rows(run) if run.metrics else [],
               "against_reference": selectors.comparison([reference, run]) if reference and reference.pk != run.pk and run.metrics else [],
               "confusion": selectors.confusion(run) if run.status == EvaluationRun.Status.DONE else None,
               "overlap": selectors.training_overlap(run)}
    return render(request, "evaluation/run_detail.html", context)


def case_detail(request, pk: int, case_id: str):
    run = get_object_or_404(EvaluationRun, pk=pk)
    case = selectors.case_get(run, case_id)
    if case is None:
        raise Http404
    from apps.cases.evidence import evidence_view  # the same evidence viewer as a judgment run's

    bundles = [{"bundle": b, "ev": evidence_view(b)} for b in case.bundles]
    return render(request, "evaluation/case_detail.html", {"run": run, "case": case, "bundles": bundles,
                                                           "status_label": selectors.status_label(case.status)})


def compare(request):
    ids = [n for n in (int_param(x) for x in request.GET.getlist("runs")) if n is not None]
    runs = {r.pk: r for r in EvaluationRun.objects.filter(pk__in=ids, status=EvaluationRun.Status.DONE)}
    ordered = [runs[pk] for pk in ids if pk in runs]
    context = {"runs": ordered, "rows": selectors.comparison(ordered) if len(ordered) >= 2 else [],
               "choices": EvaluationRun.objects.filter(status=EvaluationRun.Status.DONE)[:100]}
    return render(request, "evaluation/compare.html", context)


@require_POST
@role_required(Role.ADMIN)
def mark_reference(request, pk: int):
    run = get_object_or_404(EvaluationRun, pk=pk)
    try:
        evaluation_mark_reference(run)
    except DatasetError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, _("Run %(pk)s is now the reference.") % {"pk": run.pk})
    return redirect("evaluation:run_detail", pk=run.pk)


def metrics_csv(request, pk: int):
    run = get_object_or_404(EvaluationRun, pk=pk, status=EvaluationRun.Status.DONE)
    _json, csv_path = metrics_write(run)
    return FileResponse(csv_path.open("rb"), as_attachment=True, filename=f"evaluation-{run.pk}-metrics.csv",
                        content_type="text/csv")
