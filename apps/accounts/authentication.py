"""REST API authentication by the tokens of apps.accounts.models.ApiToken.

``Authorization: Token lxt_…`` (``Bearer`` is accepted too). The checks live in
apps.cases.services.api_tokens.api_token_use; this class turns a refusal into 401 and enforces
the scope: a read-only token gets 403 for any method that is not safe, whatever the view.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions, permissions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from apps.accounts.models import ApiToken

KEYWORDS = (b"token", b"bearer")


class ApiTokenAuthentication(BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header: Token followed by the token, no spaces.")
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        from apps.cases.services.api_tokens import TokenRefused, api_token_use

        try:
            # The Django request: DRF's own would authenticate again when its user is read.
            token = api_token_use(secret=secret, request=request._request)
        except TokenRefused as exc:
            raise exceptions.AuthenticationFailed(exc.reason) from None
        if token.scope == ApiToken.Scope.READ and request.method not in permissions.SAFE_METHODS:
            raise exceptions.PermissionDenied("This API token is read-only.")
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "apps.accounts.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "Token lxt_… (from /cases/api-token/): read-only or read-and-write, expiring."}
