"""Domain errors: plain exceptions the app's exception handlers map to HTTP statuses, once."""

from __future__ import annotations


class DomainError(Exception):
    """A rule of the domain refused the operation; the message is safe to show the caller."""

    def __init__(self, detail: str, *, extra: dict[str, object] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


class NotFound(DomainError):
    """The thing named does not exist, or the caller may not know that it does (404)."""


class Conflict(DomainError):
    """The current state does not allow the change (409)."""


class PreconditionFailed(DomainError):
    """The caller's If-Match version is not the current one (412)."""


class PreconditionRequired(DomainError):
    """The change needs an If-Match version and the caller sent none (428)."""


class Unprocessable(DomainError):
    """The request is well formed but the domain refuses it (422)."""


class Gone(DomainError):
    """The thing existed but can no longer be used, e.g. a spent pairing code (410)."""


class NotAuthenticated(DomainError):
    """No valid credentials (401)."""


class Forbidden(DomainError):
    """Valid credentials without the right to do this (403)."""


class InsufficientStorage(DomainError):
    """A storage quota is used up (507)."""


class TooManyRequests(DomainError):
    """A limit was reached; retry after ``retry_after_s`` seconds (429)."""

    def __init__(self, detail: str, *, retry_after_s: int = 60) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


STATUS_OF: dict[type[DomainError], int] = {
    NotFound: 404,
    Conflict: 409,
    PreconditionFailed: 412,
    PreconditionRequired: 428,
    Unprocessable: 422,
    Gone: 410,
    NotAuthenticated: 401,
    Forbidden: 403,
    TooManyRequests: 429,
    InsufficientStorage: 507,
}


def status_of(error: DomainError) -> int:
    """The HTTP status for a domain error: its nearest mapped class, else 400."""
    for kind in type(error).__mro__:
        if kind in STATUS_OF:
            return STATUS_OF[kind]
    return 400


class StoreError(RuntimeError):
    """The store cannot be opened or used safely."""


class StoreUnavailable(StoreError):
    """The database cannot be reached right now; the request may be retried later."""
