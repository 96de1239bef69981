from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.selectors import team_list_for
from apps.core.health import health_report_cached, public_view, report_view
from apps.core.jobs import polled_fragment
from apps.core.models import WorkerPing
from apps.core.selectors import clerk_running, home_work
from apps.core.services import PingThrottled, worker_ping_request


def home(request):
    if request.htmx and request.GET.get("part") == "running" and request.user.has_role(Role.STAFF):
        clerk = clerk_running(user=request.user)
        return polled_fragment(request, "core/_clerk_running.html", {"c": clerk}, finished=clerk["settled"])
    return render(request, "core/home.html", {"teams": team_list_for(user=request.user),
                                              "work": home_work(user=request.user)})


@login_not_required
@never_cache
def ping(request):
    """The cheapest full request through the middleware stack: the baseline of the web benchmark (P8)."""
    return HttpResponse("pong", content_type="text/plain")


@login_not_required
@never_cache
def healthz(request):
    """The status for monitors (anonymous: status only); the components for signed-in users."""
    report = health_report_cached()
    body = report if request.user.is_authenticated else public_view(report)
    return JsonResponse(body, status=200 if report["status"] != "down" else 503)


@login_not_required
@never_cache
def health_page(request):
    report = health_report_cached()
    if not request.user.is_authenticated:
        report = public_view(report)
    return render(request, "core/health.html", {"report": report_view(report)},
                  status=200 if report["status"] != "down" else 503)


@require_POST
def ping_create(request):
    try:
        ping = worker_ping_request(user=request.user)
    except PingThrottled as exc:
        response = HttpResponse(_("Too many worker round trips; try again in %(s)d s.") % {"s": exc.retry_after},
                                status=429, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(exc.retry_after)
        return response
    if request.htmx:
        return render(request, "core/_ping.html", {"ping": ping})
    return redirect("core:ping_detail", pk=ping.pk)


def ping_detail(request, pk: int):
    ping = get_object_or_404(WorkerPing, pk=pk, requested_by=request.user)
    if request.htmx:
        return polled_fragment(request, "core/_ping.html", {"ping": ping}, finished=ping.finished)
    return render(request, "core/ping.html", {"ping": ping})
