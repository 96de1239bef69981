# Load the Celery app with Django so tasks enqueued from views use its config.
from worker.celery import app as celery_app

__all__ = ("celery_app",)
