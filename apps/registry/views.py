from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.permissions import role_required
from apps.core.jobs import polled_fragment
from apps.registry.models import ModelVersion, TrainingRun
from apps.registry.selectors import models_freshness
from apps.registry.services import model_activate
from apps.registry.training import training_request


@role_required(Role.ADMIN)
def model_list(request):
    if request.method == "POST":
        run = training_request(user=request.user)
        messages.info(request, _("Retraining queued."))
        return redirect("registry:training_detail", pk=run.pk)
    active = {v.kind: v for v in ModelVersion.objects.filter(active=True)}
    runs = Paginator(TrainingRun.objects.select_related("requested_by"), 20).get_page(request.GET.get("page"))
    versions = ModelVersion.objects.select_related("activated_by")[:50]
    return render(request, "registry/model_list.html", {"active": [active.get(k) for k in ModelVersion.Kind.values],
                                                        "kinds": ModelVersion.Kind.choices, "page": runs,
                                                        "versions": versions, "freshness": models_freshness()})


@role_required(Role.ADMIN)
def training_detail(request, pk: int):
    run = get_object_or_404(TrainingRun, pk=pk)
    if request.htmx:
        return polled_fragment(request, "registry/_training_status.html", {"run": run}, finished=run.finished)
    return render(request, "registry/training_detail.html", {"run": run})


@require_POST
@role_required(Role.ADMIN)
def version_activate(request, pk: int):
    """Roll back (or forward) to a registered version: an explicit admin decision."""
    version = get_object_or_404(ModelVersion, pk=pk)
    model_activate(version=version, user=request.user)
    messages.info(request, _("%(kind)s model %(id)s is now active.") % {"kind": version.kind, "id": version.model_id[:12]})
    return redirect("registry:model_list")
