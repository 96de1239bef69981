"""gunicorn settings the Procfile's web process loads (``--config python:legalsite.gunicorn_conf``).

After a worker has loaded the application, everything it loaded (Django, the URL conf, the templates, the
models) lives as long as the worker: ``gc.freeze`` moves it out of the collector's generations, so a full
collection, which a request building a large evidence view-model sets off, no longer walks all of it
(docs/PERFORMANCE.md, P8).
"""

import gc


def post_worker_init(worker):
    gc.collect()
    gc.freeze()
