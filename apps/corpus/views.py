from django.contrib import messages
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.permissions import role_required
from apps.core.jobs import polled_fragment
from apps.corpus.forms import ImportForm
from apps.corpus.models import ImportBatch
from apps.corpus.selectors import (
    corpus_counts,
    corpus_freshness,
    count_rows,
    import_errors_view,
    import_progress_view,
    import_report_view,
)
from apps.corpus.services.importing import ImportOptions
from apps.corpus.services.uploads import (
    UploadStateError,
    corpus_upload,
    import_batch_confirm,
    import_batch_discard,
    import_progress,
)


@role_required(Role.ADMIN)
def import_list(request):
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload, data = form.cleaned_data["file"], form.cleaned_data
        options = ImportOptions(format=data["format"] or "auto", amendment=data["amendment"], law_title=data["law_title"],
                                effective_date=data["effective_date"], version_label=data["version_label"],
                                source=data["source"], skip_refused=data["skip_refused"])
        batch = corpus_upload(data=upload.read(), filename=upload.name, user=request.user, options=options)
        # No flash message: the import page itself says what is happening, and keeps saying it.
        return redirect("corpus:import_detail", pk=batch.pk)
    page = Paginator(ImportBatch.objects.select_related("created_by"), 20).get_page(request.GET.get("page"))
    # The rows follow the batches until every one is settled (nothing happens until the admin acts, or ever again).
    rows = {"page": page, "finished": all(b.settled for b in page),
            "poll_url": reverse("corpus:import_list") + f"?rows=1{f'&page={page.number}' if page.number > 1 else ''}"}
    if request.htmx and request.GET.get("rows"):
        return polled_fragment(request, "corpus/_import_rows.html", rows, finished=rows["finished"])
    return render(request, "corpus/import_list.html", {**rows, "form": form, "counts": corpus_counts(),
                                                       "freshness": corpus_freshness()})


@role_required(Role.ADMIN)
def import_detail(request, pk: int):
    batch = get_object_or_404(ImportBatch, pk=pk)
    context = {"batch": batch, "progress": import_progress_view(import_progress(batch.pk)), "finished": batch.settled,
               "report": import_report_view(batch), "errors": import_errors_view(batch),
               "written": count_rows(batch.counts)}
    if request.htmx:
        return polled_fragment(request, "corpus/_import_status.html", context, finished=context["finished"])
    return render(request, "corpus/import_detail.html", context)


@require_POST
@role_required(Role.ADMIN)
def import_confirm(request, pk: int):
    batch = get_object_or_404(ImportBatch, pk=pk)
    if batch.format == ImportBatch.Format.JUDGMENT and request.POST.get("outcomes_checked") != "yes":
        messages.error(request, _("Tick the box to confirm that you have checked every parsed outcome."))
        return redirect("corpus:import_detail", pk=batch.pk)
    try:
        import_batch_confirm(batch=batch, user=request.user)
    except UploadStateError:
        messages.error(request, _("This import is no longer waiting for confirmation."))
    return redirect("corpus:import_detail", pk=batch.pk)


@require_POST
@role_required(Role.ADMIN)
def import_discard(request, pk: int):
    batch = get_object_or_404(ImportBatch, pk=pk)
    try:
        import_batch_discard(batch=batch, user=request.user)
    except UploadStateError:
        messages.error(request, _("This import is no longer waiting for confirmation."))
    return redirect("corpus:import_detail", pk=batch.pk)


@role_required(Role.ADMIN)
def import_report_download(request, pk: int):
    """The complete dry-run report as JSON (the page shows the first rows of long lists)."""
    batch = get_object_or_404(ImportBatch, pk=pk)
    response = JsonResponse(batch.report, json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="import-{batch.pk}-report.json"'
    return response
