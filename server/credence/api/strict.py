"""Strict request bodies: JSON only, validated with msgspec's strict mode before a handler runs.

Litestar converts bodies leniently (``0`` passes as ``false``, ``1.0`` as an integer), which makes
the API accept what its own schema refuses. This hook decodes the raw body once more, strictly,
against the handler's declared body type and answers 400 naming the field when it does not fit.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ClientException, ValidationException
from litestar.handlers import HTTPRouteHandler


def is_json_media_type(content_type: str | None) -> bool:
    """True for application/json and application/<anything>+json (parameters ignored)."""
    if content_type is None:
        return False
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json") and "/" not in kind[12:]
    )


@functools.cache
def _decoder(handler: HTTPRouteHandler) -> msgspec.json.Decoder | None:
    field = handler.parsed_data_field
    if field is None:
        return None
    return msgspec.json.Decoder(type=field.annotation, strict=True)


async def strict_json_body(request: Request[Any, Any, Any]) -> None:
    """before_request hook: refuse bodies that only a lenient conversion would accept."""
    if request.method in ("GET", "HEAD", "OPTIONS", "DELETE"):
        return
    decoder = _decoder(request.route_handler)
    if decoder is None:
        return
    content_type = request.headers.get("content-type")
    body = await request.body()
    # A form or text/plain body is what a cross-origin page can send without a preflight.
    if (content_type is not None or body) and not is_json_media_type(content_type):
        raise ClientException(
            "the request body must be JSON (Content-Type: application/json)", status_code=415
        )
    if not body.strip():
        if request.route_handler.parsed_data_field.is_optional:
            return
        raise ValidationException("a JSON request body is required")
    try:
        decoder.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ValidationException(f"invalid request body: {exc}") from None
