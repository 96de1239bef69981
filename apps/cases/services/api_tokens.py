"""Tokens for the REST API (rest_framework.authtoken): one per user, replaced on request."""

from django.db import transaction
from rest_framework.authtoken.models import Token


@transaction.atomic
def api_token_rotate(*, user) -> Token:
    """Replace the user's token; the old one stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)
