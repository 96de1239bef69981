from django.urls import path

from apps.core import views

app_name = "core"
urlpatterns = [
    path("", views.home, name="home"),
    path("ping", views.ping, name="ping"),
    path("healthz", views.healthz, name="healthz"),
    path("health/", views.health_page, name="health"),
    path("health/pings/", views.ping_create, name="ping_create"),
    path("health/pings/<int:pk>/", views.ping_detail, name="ping_detail"),
]
