"""Bearer-key authentication for /api/v1 and /mcp: the Litestar edge of ``credence.access``."""

from __future__ import annotations

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult

from credence.access.keys import KeyRing


class BearerAuth(AbstractAuthenticationMiddleware):
    """Authenticates ``Authorization: Bearer crd_…`` on every /api/v1 route."""

    async def authenticate_request(self, connection: ASGIConnection) -> AuthenticationResult:
        """Resolve the bearer key or answer 401."""
        header = connection.headers.get("authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise NotAuthorizedException(
                "missing bearer key", headers={"WWW-Authenticate": "Bearer"}
            )
        keyring: KeyRing = connection.app.state.keyring
        principal = await keyring.resolve(secret.strip())
        if principal is None:
            raise NotAuthorizedException(
                "unknown or revoked key", headers={"WWW-Authenticate": "Bearer"}
            )
        return AuthenticationResult(user=principal, auth=principal.key_id)
