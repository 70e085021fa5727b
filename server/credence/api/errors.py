"""Error responses: one JSON shape for every 4xx, documented per operation."""

from __future__ import annotations

import logging
from typing import cast

from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec

from credence.errors import (
    DomainError,
    PreconditionFailed,
    StoreUnavailable,
    TooManyRequests,
    status_of,
)
from credence.models import Problem, ProblemExtra, ValidationIssue

log = logging.getLogger("credence.api")

_DESCRIPTIONS = {
    400: "The request is malformed; `detail` and `extra` name the problem.",
    401: "Missing, unknown or revoked bearer key.",
    403: "The key's scope does not allow this.",
    404: "No such object for this key.",
    409: "The object's state does not allow this.",
    412: "The If-Match version is stale; the current ETag is returned.",
    413: "The request body is too large.",
    422: "Well-formed but not acceptable: the detail says why (e.g. Idempotency-Key reuse).",
    428: "If-Match is required.",
    429: "Too many requests; retry after the Retry-After seconds.",
    410: "The pairing code is unknown, used or expired.",
    503: "The database is unavailable; retry after the Retry-After seconds.",
    507: "The agent's episode storage quota (CREDENCE_EPISODE_QUOTA_MB) is used up.",
}
COMMON = (400, 401, 413, 429, 503)
RETRY_AFTER_S = 2


def errors(*codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI response specs for the listed statuses plus the ones every route can return."""
    return {
        code: ResponseSpec(
            data_container=Problem, description=_DESCRIPTIONS[code], generate_examples=False
        )
        for code in sorted({*COMMON, *codes})
    }


def problem(status_code: int, detail: str, headers: dict[str, str] | None = None) -> Response:
    """A Problem response."""
    return Response(
        Problem(status_code=status_code, detail=detail), status_code=status_code, headers=headers
    )


def http_exception_handler(_: Request, exc: HTTPException) -> Response:
    """Render Litestar's HTTP exceptions as Problems (validation details go in ``extra``)."""
    extra = exc.extra if exc.extra else None
    if isinstance(extra, dict | list) or extra is None:
        # Litestar's details are plain JSON; ProblemExtra and ValidationIssue document their shape.
        details = cast("ProblemExtra | list[ValidationIssue] | None", extra)
        body = Problem(status_code=exc.status_code, detail=exc.detail, extra=details)
    else:
        body = Problem(status_code=exc.status_code, detail=exc.detail, extra={"info": str(extra)})
    return Response(body, status_code=exc.status_code, headers=exc.headers)


def unexpected_exception_handler(request: Request, exc: Exception) -> Response:
    """Last resort: log the bug loudly and answer a JSON 500 without internals."""
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem(500, "internal error; it has been logged")


def problem_of(exc: DomainError) -> tuple[int, Problem, dict[str, str] | None]:
    """The HTTP form of a domain refusal: status, Problem body and headers (Retry-After on a
    429, the current ETag on a 412)."""
    status = status_of(exc)
    headers = None
    if isinstance(exc, TooManyRequests):
        headers = {"Retry-After": str(exc.retry_after_s)}
    elif isinstance(exc, PreconditionFailed) and exc.extra and "current_etag" in exc.extra:
        headers = {"ETag": str(exc.extra["current_etag"])}
    body = Problem(
        status_code=status, detail=exc.detail, extra=cast("ProblemExtra | None", exc.extra)
    )
    return status, body, headers


def domain_error_handler(_: Request, exc: DomainError) -> Response:
    """A domain rule refused the request: its mapped status, with its message as the detail."""
    status, body, headers = problem_of(exc)
    return Response(body, status_code=status, headers=headers)


def store_unavailable_handler(request: Request, exc: StoreUnavailable) -> Response:
    """The database is away: 503 with Retry-After, so clients and balancers retry elsewhere."""
    # The store logs the outage once when it starts and once when it ends; not per request.
    log.debug("database unavailable on %s %s: %s", request.method, request.url.path, exc)
    body = Problem(status_code=503, detail="the database is unavailable; retry shortly")
    return Response(body, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})


def too_deep_handler(_: Request, __: RecursionError) -> Response:
    """A body nested deeper than the JSON decoder follows is the client's problem, not a 500."""
    return problem(400, "the request body is nested too deeply")
