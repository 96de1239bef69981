from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseStopPolling

from apps.accounts.models import Role
from apps.accounts.permissions import role_required
from apps.corpus.forms import ImportForm
from apps.corpus.models import ImportBatch
from apps.corpus.selectors import corpus_counts
from apps.corpus.services.uploads import corpus_upload, import_progress

FINISHED = {ImportBatch.Status.PUBLISHED, ImportBatch.Status.DUPLICATE, ImportBatch.Status.FAILED}


@role_required(Role.ADMIN)
def import_list(request):
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        batch = corpus_upload(data=upload.read(), filename=upload.name, user=request.user,
                              amendment=form.cleaned_data["amendment"], law_title=form.cleaned_data["law_title"])
        messages.info(request, _("Import queued."))
        return redirect("corpus:import_detail", pk=batch.pk)
    page = Paginator(ImportBatch.objects.select_related("created_by"), 20).get_page(request.GET.get("page"))
    return render(request, "corpus/import_list.html", {"form": form, "page": page, "counts": corpus_counts()})


@role_required(Role.ADMIN)
def import_detail(request, pk: int):
    batch = get_object_or_404(ImportBatch, pk=pk)
    context = {"batch": batch, "progress": import_progress(batch.pk), "finished": batch.status in FINISHED}
    if request.htmx:
        response = render(request, "corpus/_import_status.html", context)
        if context["finished"]:
            response.status_code = HttpResponseStopPolling.status_code
        return response
    return render(request, "corpus/import_detail.html", context)
