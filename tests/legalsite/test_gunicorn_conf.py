"""The web process's gunicorn settings (legalsite/gunicorn_conf.py, loaded by the Procfile)."""

import gc
from pathlib import Path

from legalsite import gunicorn_conf


def test_a_worker_freezes_what_it_loaded_once_the_application_is_up():
    assert "--config python:legalsite.gunicorn_conf" in (Path(__file__).resolve().parents[2] / "Procfile").read_text()
    before = gc.get_freeze_count()
    try:
        gunicorn_conf.post_worker_init(worker=None)
        assert gc.get_freeze_count() > before  # the collector no longer walks them
    finally:
        gc.unfreeze()
