from django.urls import path

from apps.corpus import views

app_name = "corpus"
urlpatterns = [
    path("imports/", views.import_list, name="import_list"),
    path("imports/<int:pk>/", views.import_detail, name="import_detail"),
]
