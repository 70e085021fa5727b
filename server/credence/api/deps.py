"""Small request helpers shared by controllers."""

from __future__ import annotations

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import SkipValidation

from credence.access.principal import Principal
from credence.services import Services


def services_of(request: Request) -> Services:
    """The app's shared services."""
    return request.app.state.services


def _provide_services(state: State) -> Services:
    return state.services


# Controllers declare ``services: SharedServices`` and Litestar hands them the app's one container.
# The container is the app's own object: validating it per request would only cost time.
SharedServices = NamedDependency[SkipValidation[Services]]
DEPENDENCIES = {"services": Provide(_provide_services, sync_to_thread=False)}


def principal_of(request: Request) -> Principal:
    """The authenticated caller."""
    return request.user
