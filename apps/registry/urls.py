from django.urls import path

from apps.registry import views

app_name = "registry"
urlpatterns = [
    path("", views.model_list, name="model_list"),
    path("training/<int:pk>/", views.training_detail, name="training_detail"),
    path("versions/<int:pk>/activate/", views.version_activate, name="version_activate"),
]
