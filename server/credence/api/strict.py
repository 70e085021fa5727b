"""Strict requests: JSON bodies only, validated strictly, and no query parameter repeated.

Litestar converts bodies leniently (``0`` passes as ``false``, ``1.0`` as an integer), which makes
the API accept what its own schema refuses. This hook decodes the raw body once more, strictly,
against the handler's declared body type and answers 400 naming the field when it does not fit.
Every query parameter is a single value, so ``?status=a&status=b`` is refused rather than read
as one of them.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ClientException, ValidationException
from litestar.handlers import HTTPRouteHandler

from credence.models import MAX_SAFE_INT


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


async def strict_request(request: Request[Any, Any, Any]) -> None:
    """before_request hook: refuse repeated query parameters and leniently-typed bodies."""
    if request.scope.get("query_string"):  # most writes have none: skip building the dict
        for name, values in request.query_params.dict().items():
            if len(values) > 1:
                raise ValidationException(f"query parameter {name!r} is given more than once")
    await strict_json_body(request)


async def strict_json_body(request: Request[Any, Any, Any]) -> None:
    """Refuse bodies that only a lenient conversion would accept."""
    if request.method in ("GET", "HEAD", "OPTIONS", "DELETE"):
        return
    decoder = _decoder(request.route_handler)
    field = request.route_handler.parsed_data_field
    if decoder is None or field is None:
        return
    content_type = request.headers.get("content-type")
    body = await request.body()
    # A form or text/plain body is what a cross-origin page can send without a preflight.
    if (content_type is not None or body) and not is_json_media_type(content_type):
        raise ClientException(
            "the request body must be JSON (Content-Type: application/json)", status_code=415
        )
    if not body.strip():
        if field.is_optional:
            return
        raise ValidationException("a JSON request body is required")
    try:
        decoder.decode(body)
    except msgspec.ValidationError as exc:
        if "got `float`" not in str(exc) or not _fits_with_integral_floats(field.annotation, body):
            raise ValidationException(f"invalid request body: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ValidationException(f"invalid request body: {exc}") from None


def _fits_with_integral_floats(annotation: Any, body: bytes) -> bool:
    """JSON Schema counts ``5.0`` as an integer, so an integral float may fill an int field."""
    try:
        value = _integral_floats_as_ints(msgspec.json.decode(body))
        msgspec.convert(value, annotation, strict=True)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return True


def _integral_floats_as_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INT:
        return int(value)
    if isinstance(value, list):
        return [_integral_floats_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item) for key, item in value.items()}
    return value
