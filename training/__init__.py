"""Offline jobs: fit the statistical models and write versioned artefacts.

Launched by hand or by Celery on the ``training`` queue; nothing imports
``training/`` (the web app and the reasoning core only load the artefacts it
writes). Training code may use scikit-learn; the inference code of every model
lives in ``worker/agents`` and needs only numpy, so the fitted estimators are
converted to plain arrays (never pickled) before they are saved.
"""
