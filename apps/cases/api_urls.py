"""The REST API (mounted at /api/v1/). DRF's views are exempt from the login
redirect (APIView.as_view marks them): DRF authenticates them (session or
token) and answers 401/403 itself."""

from django.urls import path

from apps.cases import api

app_name = "cases_api"


def _api(view_class):
    return view_class.as_view()


urlpatterns = [
    path("cases/", _api(api.CaseListCreateApi), name="case_list"),
    path("cases/<int:pk>/", _api(api.CaseDetailApi), name="case_detail"),
    path("cases/<int:pk>/runs/", _api(api.CaseRunsApi), name="case_runs"),
    path("runs/<int:pk>/", _api(api.RunDetailApi), name="run_detail"),
    path("runs/<int:pk>/bundle/", _api(api.RunBundleApi), name="run_bundle"),
    path("runs/<int:pk>/cancel/", _api(api.RunCancelApi), name="run_cancel"),
    path("runs/<int:pk>/retry/", _api(api.RunRetryApi), name="run_retry"),
]
