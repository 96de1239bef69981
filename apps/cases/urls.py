from django.urls import path

from apps.cases import views

app_name = "cases"
urlpatterns = [
    path("", views.case_list, name="case_list"),
    path("export.csv", views.case_export, name="case_export"),
    path("new/", views.case_new, name="case_new"),
    path("<int:pk>/", views.case_detail, name="case_detail"),
    path("<int:pk>/edit/", views.case_edit, name="case_edit"),
    path("<int:pk>/revisions/", views.case_revisions, name="case_revisions"),
    path("<int:pk>/runs/", views.run_create, name="run_create"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/retry/", views.run_retry, name="run_retry"),
    path("runs/<int:pk>/bundle.json", views.run_bundle, name="run_bundle"),
    path("runs/<int:pk>/defendants/<int:position>/", views.result_detail, name="result_detail"),
    path("uploads/<int:pk>/", views.upload_detail, name="upload_detail"),
    path("api-token/", views.api_token, name="api_token"),
    path("api-token/issue/", views.api_token_issue, name="api_token_issue"),
]
