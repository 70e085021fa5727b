"""Small request helpers shared by controllers."""

from __future__ import annotations

from litestar import Request

from credence.access.principal import Principal
from credence.services import Services


def services_of(request: Request) -> Services:
    """The app's shared services."""
    return request.app.state.services


def principal_of(request: Request) -> Principal:
    """The authenticated caller."""
    return request.user
