from django.urls import path

from apps.evaluation import views

app_name = "evaluation"
urlpatterns = [
    path("", views.run_list, name="run_list"),
    path("compare/", views.compare, name="compare"),
    path("<int:pk>/", views.run_detail, name="run_detail"),
    path("<int:pk>/metrics.csv", views.metrics_csv, name="metrics_csv"),
    path("<int:pk>/reference/", views.mark_reference, name="mark_reference"),
    path("<int:pk>/cases/<str:case_id>/", views.case_detail, name="case_detail"),
]
