"""The OpenAPI document: Litestar's paths with component schemas taken from msgspec itself.

Litestar drops constraints on nested types (the pattern of each item in a list, say), so a
fuzzer reading its schema would send values the validator refuses. msgspec generates the schema
of the very Structs it validates with, so the components come from msgspec and the document
cannot disagree with validation.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import msgspec
import yaml

from credence.settings import Settings


def _credence_structs(names: set[str]) -> list[type]:
    """Every msgspec Struct defined in the credence package whose name the document uses."""
    found, pending = {}, list(msgspec.Struct.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("credence.") and cls.__name__ in names:
            found[cls.__name__] = cls
    return [found[name] for name in sorted(found)]


def patch_components(document: dict[str, Any]) -> dict[str, Any]:
    """Replace the component schemas of our Structs with msgspec's exact ones."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    _, components = msgspec.json.schema_components(
        _credence_structs(set(schemas)), ref_template="#/components/schemas/{name}"
    )
    for name, schema in components.items():
        if name in schemas:
            schemas[name] = schema
    return document


def openapi_dict(app: Any | None = None) -> dict[str, Any]:
    """The OpenAPI document as plain data, built from the app without opening a store."""
    if app is None:
        from credence.app import create_app

        app = create_app(Settings(data_dir=Path("/nonexistent")), components=[])
    document = msgspec.to_builtins(app.openapi_schema.to_schema())
    document["paths"] = {
        path: item for path, item in document["paths"].items() if not path.startswith("/schema")
    }
    mark_public_operations(document, app)
    require_if_match(document)
    declare_unsupported_media_type(document)
    return patch_components(document)


def mark_public_operations(document: dict[str, Any], app: Any) -> None:
    """Operations that skip bearer auth say so with an empty security requirement."""
    public = {
        handler.operation_id
        for route in app.routes
        for handler in getattr(route, "route_handlers", ())
        if handler.opt.get("exclude_from_auth")
    }
    for operation in _operations(document):
        if operation.get("operationId") in public:
            operation["security"] = []


def require_if_match(document: dict[str, Any]) -> None:
    """Decisions refuse to run without If-Match (428), so the document marks it required."""
    for operation in _operations(document):
        for parameter in operation.get("parameters", []):
            if parameter.get("in") == "header" and parameter.get("name") == "If-Match":
                parameter["required"] = True
                parameter["schema"] = {"type": "string", "maxLength": 40}


def declare_unsupported_media_type(document: dict[str, Any]) -> None:
    """Operations with a JSON body answer 415 to any other Content-Type (api/strict.py)."""
    for operation in _operations(document):
        if "requestBody" in operation:
            operation.setdefault("responses", {})["415"] = {
                "description": "The body is not JSON: send Content-Type application/json.",
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}
                },
            }


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        operation
        for item in document.get("paths", {}).values()
        for method, operation in item.items()
        if isinstance(operation, dict) and method != "parameters"
    ]


@functools.cache
def cached_openapi_dict() -> dict[str, Any]:
    """The document, built once per process (the routes never change at run time)."""
    return openapi_dict()


def render_openapi() -> str:
    """The OpenAPI document as YAML with a stable key order."""
    return yaml.safe_dump(openapi_dict(), sort_keys=True, allow_unicode=True, width=100)
