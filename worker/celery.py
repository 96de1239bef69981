"""The Celery app. Configuration comes from Django settings (CELERY_*)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

app = Celery("lextrace")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = ("worker.tasks",)
