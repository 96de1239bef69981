"""The pure reasoning core: no Django, Celery or torch imports anywhere in this package."""
