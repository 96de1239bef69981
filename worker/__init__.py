# Intentionally empty: worker.agents must import without Celery or Django.
# The Celery app lives in worker.celery (start it with `celery -A worker.celery:app`).
