import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
application = get_wsgi_application()


def _preload() -> None:
    """The what-if's strategy, built in the background as the web process starts (LEXTRACE_WHATIF_PRELOAD)."""
    import threading

    from django.conf import settings

    if settings.WHATIF_PRELOAD:
        from apps.judging.services import whatif_preload

        threading.Thread(target=whatif_preload, name="whatif-preload", daemon=True).start()


_preload()
