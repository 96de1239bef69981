from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("apps.core.urls")),
    path("accounts/", include("apps.accounts.urls")),
    path("corpus/", include("apps.corpus.urls")),
    path("graph/", include("apps.graph.urls")),
    path("evaluation/", include("apps.evaluation.urls")),
    path("audit/", include("apps.audit.urls")),
    path("models/", include("apps.registry.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]

admin.site.site_header = "Lextrace"
admin.site.site_title = "Lextrace"
