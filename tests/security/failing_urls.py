"""The real URLs plus one view that fails the way a database error does, with case text in the row."""

from django.db import connection
from django.urls import include, path

SENTINEL = "SENTINEL-被告人张三身份证-110101199003071234"


def failing_view(request):
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE IF NOT EXISTS leak_probe (facts text, n int NOT NULL)")
        cursor.execute("INSERT INTO leak_probe VALUES (%s, NULL)", [SENTINEL])


urlpatterns = [path("boom/", failing_view), path("", include("legalsite.urls"))]
