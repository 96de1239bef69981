from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

urlpatterns = [
    path("", include("apps.core.urls")),
    path("accounts/", include("apps.accounts.urls")),
    path("corpus/", include("apps.corpus.urls")),
    path("graph/", include("apps.graph.urls")),
    path("evaluation/", include("apps.evaluation.urls")),
    path("audit/", include("apps.audit.urls")),
    path("models/", include("apps.registry.urls")),
    path("cases/", include("apps.cases.urls")),
    path("review/", include("apps.review.urls")),
    path("api/v1/", include("apps.cases.api_urls")),
    path("api/v1/", include("apps.review.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # The split view serves Swagger UI's start-up script as a file: the CSP allows no inline script.
    path("api/docs/", login_required(SpectacularSwaggerSplitView.as_view(url_name="api_schema")), name="api_docs"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]

admin.site.site_header = "Lextrace"
admin.site.site_title = "Lextrace"
