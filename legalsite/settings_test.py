"""Test settings: the real services (PostgreSQL, Redis), faster hashing."""

from legalsite.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405 - whitenoise warns when it is missing
# The second factor is off for the suite (force_login sessions); tests/security/test_second_factor.py turns it on.
OTP_ROLES = []
