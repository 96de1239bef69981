from django.urls import path

from apps.review import views

app_name = "review"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("runs/<int:pk>/", views.review_detail, name="review_detail"),
    path("runs/<int:pk>/items/", views.item_set, name="item_set"),
    path("runs/<int:pk>/items/<int:item_pk>/undo/", views.item_undo, name="item_undo"),
    path("runs/<int:pk>/accept-rest/", views.accept_rest, name="accept_rest"),
    path("runs/<int:pk>/decide/", views.decide, name="decide"),
    path("runs/<int:pk>/verify/", views.verify, name="verify"),
    path("runs/<int:pk>/opened/", views.opened, name="opened"),
    path("runs/<int:pk>/assign/", views.assign, name="assign"),
    path("runs/<int:pk>/memo/", views.memo_preview, name="memo_preview"),
    path("runs/<int:pk>/memo.<str:fmt>", views.memo_export, name="memo"),
    path("cases/<int:case_pk>/hold/<str:action>/", views.hold, name="hold"),
]
