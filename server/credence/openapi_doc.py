"""The OpenAPI document: Litestar's paths with component schemas taken from msgspec itself.

Litestar drops constraints on nested types (the pattern of each item in a list, say), so a
fuzzer reading its schema would send values the validator refuses. msgspec generates the schema
of the very Structs it validates with, so the components come from msgspec and the document
cannot disagree with validation. Passes after that make the document valid and complete for
client generators whatever a route declares: described tags, typed headers, optional parameters
without null clutter, shared enums, and cross-field rules (``json_schema_rules``).
"""

from __future__ import annotations

import typing
from typing import Any

import msgspec
import yaml

from credence import models


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
    structs = _credence_structs(set(schemas))
    _, components = msgspec.json.schema_components(
        structs, ref_template="#/components/schemas/{name}"
    )
    for name, schema in components.items():
        if name in schemas:
            schemas[name] = schema
    for struct in structs:
        _add_rules(schemas[struct.__name__], getattr(struct, "json_schema_rules", {}))
    _give_arrays_items(document)
    share_enums(document)
    return document


def _literal_aliases() -> dict[str, list[str]]:
    """The named string Literals of the contract (BeliefStatus, Provenance, …) by value set."""
    by_values: dict[frozenset[str], list[tuple[str, list[str]]]] = {}
    for name, value in vars(models).items():
        if typing.get_origin(value) is typing.Literal and name[0].isupper():
            values = list(typing.get_args(value))
            if all(isinstance(v, str) for v in values):
                by_values.setdefault(frozenset(values), []).append((name, values))
    # Two aliases with the same members would be ambiguous: neither is shared.
    return {entries[0][0]: entries[0][1] for entries in by_values.values() if len(entries) == 1}


def share_enums(document: dict[str, Any]) -> None:
    """Every inline enum equal to a named Literal becomes a $ref to one shared component.

    Generators make a class per inline enum (BeliefStatus, AuditEntryAfterStatus,
    ListBeliefsStatus… all the same three values); a shared component gives them one.
    """
    aliases = _literal_aliases()
    by_values = {frozenset(values): name for name, values in aliases.items()}
    schemas = document["components"]["schemas"]
    used: set[str] = set()

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(value) for value in node]
        if not isinstance(node, dict):
            return node
        enum = node.get("enum")
        if isinstance(enum, list) and set(node) <= {"enum", "type", "description", "default"}:
            name = by_values.get(frozenset(enum))
            if name is not None and node.get("type", "string") == "string":
                used.add(name)
                shared = {"$ref": f"#/components/schemas/{name}"}
                shared.update({k: node[k] for k in ("description", "default") if k in node})
                return shared
        return {key: visit(value) for key, value in node.items()}

    document["paths"] = visit(document["paths"])
    for name in list(schemas):
        schemas[name] = visit(schemas[name])
    for name in sorted(used):
        schemas.setdefault(name, {"type": "string", "enum": aliases[name], "title": name})


def _add_rules(schema: dict[str, Any], rules: dict[str, Any]) -> None:
    """Merge a Struct's ``json_schema_rules`` (rules across fields) into its schema."""
    for key, value in rules.items():
        if key == "properties":
            for field, extra in value.items():
                schema["properties"][field].update(extra)
        else:
            schema[key] = value


def _give_arrays_items(node: Any) -> None:
    """``list[Any]`` comes out as an array without ``items``, which OpenAPI 3.1 tools reject."""
    if isinstance(node, dict):
        if node.get("type") == "array" and "items" not in node:
            node["items"] = {}
        for value in node.values():
            _give_arrays_items(value)
    elif isinstance(node, list):
        for value in node:
            _give_arrays_items(value)


def openapi_dict(app: Any) -> dict[str, Any]:
    """The OpenAPI document of ``app`` as plain data (its routes and types; no store opened)."""
    document = msgspec.to_builtins(app.openapi_schema.to_schema())
    document["paths"] = {
        path: item for path, item in document["paths"].items() if not path.startswith("/schema")
    }
    mark_public_operations(document, app)
    require_if_match(document)
    declare_unsupported_media_type(document)
    describe_document(document)
    declare_malformed_requests(document)
    type_response_headers(document)
    simplify_optional_parameters(document)
    optional_bodies(document)
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


LICENSE = {"name": "Apache-2.0", "identifier": "Apache-2.0"}
CONTACT = {"name": "Credence maintainers"}
TAG_DESCRIPTIONS = {
    "agents": "Agents whose memory Credence keeps, and their reflection settings.",
    "episodes": "Finished turns an agent reports, and recall search over them.",
    "beliefs": "Proposed and kept beliefs, their audit trail, and the four decisions.",
    "agent integration": "What an agent calls on its prompt path: context, turns, export.",
    "jobs": "Reflection jobs, the wakes that submit them, and events that trigger wakes.",
    "admin": "API keys, pairing codes and the audit chain check (admin keys only).",
    "auth": "Who the caller is, and pairing a device for a reviewer key.",
    "push": "Web push subscriptions, notification channels and notification actions.",
    "health": "Liveness and readiness probes for orchestrators (no authentication).",
}
# Every response that carries one of these headers declares it with this schema.
HEADER_SCHEMAS: dict[str, dict[str, Any]] = {
    "ETag": {
        "type": "string",
        "pattern": '^"[0-9]+"' + models.END,
        "description": 'A strong ETag, e.g. "3"',
    },
    "Location": {"type": "string", "format": "uri-reference"},
    "Retry-After": {"type": "integer", "minimum": 0, "description": "Seconds to wait"},
}
ERROR_HEADERS = {
    "412": {"ETag": "The belief's current version: reload, then decide again with it"},
    "429": {"Retry-After": "Seconds until a request may succeed"},
}


def describe_document(document: dict[str, Any]) -> None:
    """License, contact and a described tag for every tag an operation uses."""
    document["info"]["license"] = LICENSE
    document["info"]["contact"] = CONTACT
    used = {tag for operation in _operations(document) for tag in operation.get("tags", [])}
    # A tag missing from TAG_DESCRIPTIONS is listed bare; tests/contract fails until it is added.
    document["tags"] = [
        {"name": name, "description": text}
        for name, text in TAG_DESCRIPTIONS.items()
        if name in used
    ] + [{"name": name} for name in sorted(used - TAG_DESCRIPTIONS.keys())]


def declare_malformed_requests(document: dict[str, Any]) -> None:
    """Every route can answer 400: the strict-request hook refuses e.g. a repeated parameter."""
    for operation in _operations(document):
        operation["responses"].setdefault(
            "400",
            {
                "description": "The request is malformed (e.g. a query parameter given twice).",
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}
                },
            },
        )


def type_response_headers(document: dict[str, Any]) -> None:
    """Every response header has a schema; 412 and 429 declare the headers they send."""
    for operation in _operations(document):
        for status, response in operation.get("responses", {}).items():
            headers = response.setdefault("headers", {})
            for name, description in ERROR_HEADERS.get(status, {}).items():
                headers.setdefault(name, {"description": description})
            for name, header in headers.items():
                for noise in ("required", "deprecated"):
                    if header.get(noise) is False:
                        del header[noise]
                header.setdefault("schema", dict(HEADER_SCHEMAS.get(name, {"type": "string"})))
            if not headers:
                del response["headers"]


def simplify_optional_parameters(document: dict[str, Any]) -> None:
    """Optional parameters: constraints on the value itself, null only where it means absent.

    Litestar writes ``T | None`` as a oneOf with null and the constraints beside it (generators
    then lose the format) or as an enum with a null member (each use becomes its own enum
    class). The server reads the text ``null`` as absent for enums and booleans, but as the
    string itself for strings, so only the former keep a null branch.
    """
    for operation in _operations(document):
        for parameter in operation.get("parameters", []):
            if parameter.get("required"):
                continue
            schema = parameter.get("schema", {})
            value, nullable = _split_null(schema)
            description = value.pop("description", None)
            if nullable and (value.get("type") != "string" or "enum" in value):
                schema = {"anyOf": [value, {"type": "null"}]}
            else:
                schema = value
            if description is not None:
                schema["description"] = description
            parameter["schema"] = schema


def optional_bodies(document: dict[str, Any]) -> None:
    """An optional body (``JSONBody[T | None] = None``) is documented as T that may be left out.

    Litestar writes it as a required oneOf with null; the decision handlers treat a missing body
    as an empty one (a bare Keep or Forget). Generated clients mishandle an optional union body
    (openapi-python-client sends its "unset" marker), so the document offers omission instead.
    """
    for operation in _operations(document):
        media = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if media is None:
            continue
        value, nullable = _split_null(media.get("schema", {}))
        if nullable:
            media["schema"] = value
            operation["requestBody"]["required"] = False


def _split_null(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The non-null part of a schema, and whether it admitted null."""
    value = {key: item for key, item in schema.items() if key not in ("oneOf", "anyOf")}
    nullable = False
    for key in ("oneOf", "anyOf"):
        variants = schema.get(key)
        if variants is None:
            continue
        others = [v for v in variants if v.get("type") != "null"]
        nullable = nullable or len(others) < len(variants)
        if len(others) != 1:
            value[key] = others
        else:
            value.update(others[0])
    if isinstance(value.get("type"), list):
        types = [t for t in value["type"] if t != "null"]
        nullable = nullable or len(types) < len(value["type"])
        value["type"] = types[0] if len(types) == 1 else types
    if None in value.get("enum", []):
        nullable = True
        value["enum"] = [item for item in value["enum"] if item is not None]
    return value, nullable


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        operation
        for item in document.get("paths", {}).values()
        for method, operation in item.items()
        if isinstance(operation, dict) and method != "parameters"
    ]


def render_openapi(document: dict[str, Any]) -> str:
    """The OpenAPI document as YAML with a stable key order."""
    return yaml.safe_dump(document, sort_keys=True, allow_unicode=True, width=100)
