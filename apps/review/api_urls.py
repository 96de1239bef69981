from django.urls import path

from apps.review import api

app_name = "review_api"

urlpatterns = [
    path("runs/<int:pk>/review/", api.ReviewApi.as_view(), name="review"),
    path("runs/<int:pk>/review/decision/", api.DecisionApi.as_view(), name="decision"),
    path("runs/<int:pk>/review/verify/", api.VerifyApi.as_view(), name="verify"),
    path("runs/<int:pk>/review/defendants/<int:position>/", api.ReviewDefendantApi.as_view(), name="defendant"),
    path("runs/<int:pk>/review/accept-rest/", api.AcceptRestApi.as_view(), name="accept_rest"),
    path("cases/<int:pk>/hold/", api.HoldApi.as_view(), name="hold"),
    path("cases/<int:pk>/delete/", api.CaseDeleteApi.as_view(), name="case_delete"),
]
