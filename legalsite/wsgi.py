import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
application = get_wsgi_application()


def _warm_up() -> None:
    """Build the what-if's strategy and compile the project's templates, then freeze what the process holds:
    the tokenizer, the models, the checklist statistics and the compiled templates live as long as the
    process, and out of the collector's generations a full collection no longer walks them
    (legalsite/gunicorn_conf.py freezes what was loaded before; these come later, from this thread)."""
    import gc

    from apps.judging.services import whatif_preload

    whatif_preload()
    _compile_templates()
    gc.collect()
    gc.freeze()


def _compile_templates() -> None:
    """Every template of the project's templates directory, compiled into the cached loader (as a first
    request would)."""
    import logging
    from pathlib import Path

    from django.conf import settings
    from django.template import TemplateSyntaxError
    from django.template.loader import get_template

    root = Path(settings.BASE_DIR) / "templates"
    for path in sorted(root.rglob("*.html")):
        try:
            get_template(path.relative_to(root).as_posix())
        except TemplateSyntaxError:  # a page that is broken says so when it is rendered
            logging.getLogger(__name__).warning("template %s does not compile", path, exc_info=True)


def _preload() -> None:
    """The what-if's strategy, built in the background as the web process starts (LEXTRACE_WHATIF_PRELOAD)."""
    import threading

    from django.conf import settings

    if settings.WHATIF_PRELOAD:
        threading.Thread(target=_warm_up, name="whatif-preload", daemon=True).start()


_preload()
