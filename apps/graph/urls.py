from django.urls import path

from apps.graph import views

app_name = "graph"
urlpatterns = [
    path("", views.statistics, name="statistics"),
    path("explore/", views.explorer, name="explorer"),
    path("neighbourhood/<str:label>/<int:pk>.json", views.neighbourhood_json, name="neighbourhood"),
]
