from django.urls import path

from apps.corpus import views

app_name = "corpus"
urlpatterns = [
    path("imports/", views.import_list, name="import_list"),
    path("imports/<int:pk>/", views.import_detail, name="import_detail"),
    path("imports/<int:pk>/publish/", views.import_confirm, name="import_confirm"),
    path("imports/<int:pk>/discard/", views.import_discard, name="import_discard"),
    path("imports/<int:pk>/report.json", views.import_report_download, name="import_report"),
]
