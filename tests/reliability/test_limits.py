"""Limits: oversized bodies, page caps, rate-limit bursts and hostile values on every route."""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml
from harness.httpload import Connection, Request, Response

from credence.settings import Settings
from tests.helpers import make_agent, pending_belief
from tests.livesrv import LiveServer, cli_key, running

ROOT = Path(__file__).resolve().parents[2]
MAX_BODY = Settings().max_body_bytes
MIB = 1024 * 1024
HOSTILE = "@@hostile@@"

# JSON fragments that replace one leaf of a valid body. Raw bytes, not Python values: several
# of them (a lone surrogate as UTF-8 bytes, invalid UTF-8) cannot be produced by json.dumps.
BODY_VALUES: dict[str, bytes] = {
    "int 2**63": b"9223372036854775808",
    "int -2**63-1": b"-9223372036854775809",
    "int 2**64": b"18446744073709551616",
    "int 10**30": b"1" + b"0" * 30,
    "float 1e400": b"1e400",
    "escaped lone surrogate": b'"\\ud800"',
    "escaped low surrogate": b'"x\\udfffy"',
    "raw surrogate bytes": b'"\xed\xa0\x80"',
    "invalid utf-8": b'"\xff\xfe"',
    "NUL escape": b'"a\\u0000b"',
    "1 MB string": b'"' + b"x" * MIB + b'"',
}
# Percent-encoded path segments and query values (the request line itself stays ASCII).
URL_VALUES: dict[str, str] = {
    "surrogate utf-8": "%ED%A0%80",
    "surrogate %u": "%uD800",
    "surrogate mixed": "ab%ED%B0%80cd",
    "NUL": "a%00b",
    "invalid utf-8": "%FF%FE",
    "int 2**63": "9223372036854775808",
    "int -2**63-1": "-9223372036854775809",
    "float 1e400": "1e400",
    "traversal": "..%2F..%2Fetc%2Fpasswd",
    "long": "x" * 8000,
}
HEADER_VALUES: dict[str, dict[str, str]] = {
    "If-Match 2**63": {"If-Match": '"9223372036854775808"'},
    "If-Match negative": {"If-Match": '"-1"'},
    "If-Match long": {"If-Match": '"' + "9" * 5000 + '"'},
    "Idempotency-Key latin-1": {"Idempotency-Key": "caf\xe9"},
    "Idempotency-Key percent surrogate": {"Idempotency-Key": "%ED%A0%80"},
    "Idempotency-Key long": {"Idempotency-Key": "k" * 5000},
}

# Valid bodies for the operations we know; other operations get one generated from the schema.
KNOWN_BODIES: dict[str, Any] = {
    "createAgent": {"id": "hostile-agent", "name": "Hostile", "roles": ["coder"]},
    "updateAgent": {"name": "Renamed", "roles": ["coder"], "reflection": {"cron": "0 4 * * *"}},
    "createEpisode": {
        "session_id": "s1",
        "summary": "did a thing",
        "role_label": "coder",
        "finished_at": "2026-11-01T10:00:00Z",
        "interventions": [{"trigger": "steer", "text": "use pnpm"}],
        "metadata": {"tool": "web", "n": 1},
    },
    "createEpisodes": {"episodes": [{"session_id": "s1", "summary": "did a thing"}]},
    "proposeBeliefs": {
        "proposals": [
            {"op": "add", "belief": "Check sizes first", "confidence": 0.7, "rationale": "r"}
        ]
    },
    "editBelief": {"content": "Owner words"},
    "forgetBelief": {"reason": "wrong"},
    "createKey": {"scope": "reviewer", "agents": ["coder"], "label": "phone"},
    "createPairingCode": {"agents": ["coder"], "label": "phone"},
    "pairDevice": {"code": "abcdefghijklmnop"},
}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    """The committed OpenAPI document: the list of routes the service promises."""
    return yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    """A server with the default body limit and rate limits too high to get in the way."""
    settings = Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        rate_limit_per_minute=10**9,
        pair_rate_limit_per_minute=10**9,
    )
    with running(settings) as server:
        yield server


@pytest.fixture
def world(live: LiveServer) -> dict[str, str]:
    """An agent, a pending belief and a key, so that path parameters can name real objects."""
    admin_key = cli_key(live.settings, "admin")
    with live.client(admin_key) as admin:
        make_agent(admin, "coder")
        belief = pending_belief(admin)
        key_id = admin.get("/api/v1/me").json()["key_id"]
    return {"admin_key": admin_key, "belief_id": belief["id"], "key_id": key_id}


# --- a small schema-driven example generator ----------------------------------------------

_CANDIDATES = (
    "coder",
    "x",
    "s1",
    "abcdefghijklmnop",
    "b_" + "0" * 26,
    "2026-11-01T10:00:00Z",
    "0 3 * * *",
    "mailto:owner@credence-demo.org",
    "https://push.credence-demo.org/send/abc",
    "steer",
)


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = spec["components"]["schemas"][name]
    return schema


def example(schema: dict[str, Any], spec: dict[str, Any], depth: int = 0) -> Any:
    """A value that fits ``schema`` as well as a generic guess can (known ops are hand-made)."""
    schema = _resolve(schema, spec)
    if depth > 6:
        return None
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [_resolve(o, spec) for o in schema[key]]
            chosen = next((o for o in options if o.get("type") != "null"), options[0])
            return example(chosen, spec, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        return {
            name: example(properties[name], spec, depth + 1)
            for name in schema.get("required", [])
            if name in properties
        }
    if kind == "array":
        return [example(schema.get("items", {}), spec, depth + 1)] * max(
            1, schema.get("minItems", 1)
        )
    if kind == "integer":
        return max(int(schema.get("minimum", 1)), 1)
    if kind == "number":
        low, high = schema.get("minimum", 0.0), schema.get("maximum", 1.0)
        return (low + high) / 2
    if kind == "boolean":
        return True
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 10**9)
        pattern = schema.get("pattern")
        for candidate in _CANDIDATES:
            if low <= len(candidate) <= high and (pattern is None or re.search(pattern, candidate)):
                return candidate
        return "x" * max(low, 1)
    return None


def schema_at(schema: dict[str, Any], path: tuple, spec: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of the value at ``path``, or None where the schema allows any JSON at all."""
    schema = _resolve(schema, spec)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [
                _resolve(o, spec) for o in schema[key] if _resolve(o, spec).get("type") != "null"
            ]
            schema = options[0] if options else {}
    if not path:
        return schema if schema else None
    step, rest = path[0], path[1:]
    if isinstance(step, int):
        return schema_at(schema.get("items", {}), rest, spec)
    properties = schema.get("properties", {})
    if step in properties:
        return schema_at(properties[step], rest, spec)
    extra = schema.get("additionalProperties", {})
    return schema_at(extra if isinstance(extra, dict) else {}, rest, spec)


def url_value_fits(schema: dict[str, Any], raw: str, spec: dict[str, Any]) -> bool:
    """Whether a percent-encoded path or query value is one the parameter's schema allows."""
    schema = _resolve(schema, spec)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return any(url_value_fits(o, raw, spec) for o in schema[key])
    value = unquote(raw, errors="replace")
    kind = schema.get("type")
    if kind == "null":
        return False
    if "enum" in schema:
        return value in [str(v) for v in schema["enum"]]
    if kind in ("integer", "number"):
        try:
            number = int(value) if kind == "integer" else float(value)
        except ValueError:
            return False
        low, high = schema.get("minimum", -math.inf), schema.get("maximum", math.inf)
        return math.isfinite(number) and low <= number <= high
    if kind == "boolean":
        return value in ("true", "false", "1", "0")
    if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", 10**9):
        return False
    pattern = schema.get("pattern")
    return pattern is None or re.search(pattern, value) is not None


def leaf_paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path to a scalar (or empty container) inside a JSON value."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaf_paths(item, (*prefix, key))
    elif isinstance(value, list) and value:
        yield from leaf_paths(value[0], (*prefix, 0))
    else:
        yield prefix


def with_hostile(body: Any, path: tuple, fragment: bytes) -> bytes:
    """``body`` as JSON bytes with the leaf at ``path`` replaced by a raw JSON fragment."""
    copy = json.loads(json.dumps(body))
    if not path:
        return fragment
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = HOSTILE
    return json.dumps(copy).encode().replace(json.dumps(HOSTILE).encode(), fragment)


# --- the cases ----------------------------------------------------------------------------


def operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(method, path template, operation) for every operation in the document."""
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield method.upper(), path, operation


def _path_values(world: dict[str, str]) -> dict[str, str]:
    return {"agent_id": "coder", "belief_id": world["belief_id"], "key_id": world["key_id"]}


def _fill(template: str, params: dict[str, str]) -> str:
    return re.sub(r"\{([^}]+)\}", lambda m: params.get(m.group(1), "x"), template)


def hostile_cases(
    spec: dict[str, Any], world: dict[str, str]
) -> Iterator[tuple[str, Request, bool]]:
    """(description, request, must be refused): one hostile value at a time, the rest valid.

    Every case must be answered without a 5xx. It must also be refused (4xx) unless the value
    is one the documented schema allows there: an opaque cursor that happens to be digits, free
    text, or a value inside free-form metadata.
    """
    auth = {"Authorization": f"Bearer {world['admin_key']}", "Content-Type": "application/json"}
    path_values = _path_values(world)
    for method, template, operation in operations(spec):
        op_id = operation.get("operationId", template)
        params = operation.get("parameters", [])
        body_schema = (
            operation.get("requestBody", {})
            .get("content", {})
            .get("application/json", {})
            .get("schema")
        )
        body = KNOWN_BODIES.get(op_id)
        if body is None and body_schema is not None:
            body = example(body_schema, spec)
        valid_body = json.dumps(body).encode() if body is not None else b""
        headers = dict(auth)
        if any(p["in"] == "header" and p["name"] == "If-Match" for p in params):
            headers["If-Match"] = '"1"'
        path = _fill(template, path_values)
        for param in params:
            name = param["name"]
            for label, value in URL_VALUES.items():
                refuse = not url_value_fits(param.get("schema", {}), value, spec)
                if param["in"] == "path":
                    hostile_path = _fill(template, {**path_values, name: value})
                    yield (
                        f"{op_id} path {name}={label}",
                        Request(method, hostile_path, headers, valid_body),
                        refuse,
                    )
                elif param["in"] == "query":
                    yield (
                        f"{op_id} query {name}={label}",
                        Request(method, f"{path}?{name}={value}", headers, valid_body),
                        refuse,
                    )
        for label, extra in HEADER_VALUES.items():
            header = next(iter(extra))
            if any(p["in"] == "header" and p["name"] == header for p in params):
                yield (
                    f"{op_id} header {label}",
                    Request(method, path, {**headers, **extra}, valid_body),
                    True,
                )
        if body is None:
            continue
        for leaf in leaf_paths(body):
            leaf_schema = schema_at(body_schema or {}, leaf, spec)
            for label, fragment in BODY_VALUES.items():
                refuse = leaf_schema is not None and not (
                    label == "1 MB string" and leaf_schema.get("maxLength", MIB) >= MIB
                )
                yield (
                    f"{op_id} body {'.'.join(map(str, leaf)) or '<root>'}={label}",
                    Request(method, path, headers, with_hostile(body, leaf, fragment)),
                    refuse,
                )
        for label, raw in {
            "whole body invalid utf-8": b'{"\xff": 1}',
            "deep nesting": b"[" * 100_000 + b"]" * 100_000,
            "NaN literal": b'{"x": NaN}',
        }.items():
            yield f"{op_id} {label}", Request(method, path, headers, raw), True


async def _send_all(port: int, cases: list[tuple]) -> list[tuple[str, Response, bool]]:
    answers: list[tuple[str, Response, bool]] = []
    queue = list(reversed(cases))

    async def worker() -> None:
        connection = Connection("127.0.0.1", port)
        try:
            while queue:
                label, request, *refuse = queue.pop()
                answers.append((label, await connection.send(request), bool(refuse and refuse[0])))
        finally:
            await connection.close()

    await asyncio.gather(*(worker() for _ in range(4)))
    return answers


def _port(server: LiveServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def test_hostile_values_on_every_route_answer_4xx_never_500(
    live: LiveServer, world: dict[str, str], spec: dict[str, Any]
) -> None:
    cases = list(hostile_cases(spec, world))
    assert len({label.split(" ")[0] for label, *_ in cases}) >= 20  # the routes really are covered
    answers = asyncio.run(_send_all(_port(live), cases))
    assert len(answers) == len(cases)
    server_errors = [(label, r.status, r.body[:200]) for label, r, _ in answers if r.status >= 500]
    assert server_errors == []
    accepted = [
        (label, r.status, r.body[:120]) for label, r, refuse in answers if refuse and r.status < 400
    ]
    assert accepted == []
    problems = [label for label, r, _ in answers if r.status >= 400 and not _is_problem(r)]
    assert problems == []
    with live.client(world["admin_key"]) as admin:  # and the server is still itself afterwards
        assert admin.get("/readyz").status_code == 200
        belief = admin.get(f"/api/v1/beliefs/{world['belief_id']}").json()
        assert (belief["status"], belief["version"]) == ("pending", 1)


def _is_problem(response: Response) -> bool:
    if "json" not in response.headers.get("content-type", ""):
        return response.status in (400, 404, 413)  # answered by the HTTP layer itself
    try:
        body = json.loads(response.body)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("status_code") == response.status


def test_oversized_bodies_answer_413_on_every_write_route(
    live: LiveServer, world: dict[str, str], spec: dict[str, Any]
) -> None:
    auth = {"Authorization": f"Bearer {world['admin_key']}", "Content-Type": "application/json"}
    path_values = _path_values(world)
    oversized = b'{"x": "' + b"y" * (MAX_BODY + 1024) + b'"}'
    cases = []
    for method, template, operation in operations(spec):
        if "requestBody" not in operation:
            continue
        path = _fill(template, path_values)
        headers = {**auth, "If-Match": '"1"'}
        cases.append(
            (
                f"{operation['operationId']} content-length",
                Request(method, path, headers, oversized),
            )
        )
    assert len(cases) >= 8
    answers = asyncio.run(_send_all(_port(live), cases))
    assert {label: r.status for label, r, _ in answers} == {label: 413 for label, _ in cases}


def test_streamed_body_past_the_limit_is_cut_off_with_413(
    live: LiveServer, world: dict[str, str]
) -> None:
    async def chunked() -> Response:
        reader, writer = await asyncio.open_connection("127.0.0.1", _port(live))
        writer.write(
            b"POST /api/v1/agents/coder/episodes HTTP/1.1\r\nHost: x\r\n"
            + f"Authorization: Bearer {world['admin_key']}\r\n".encode()
            + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"y" * 65536
        try:
            for _ in range(MAX_BODY // len(chunk) + 4):
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except OSError:
            pass  # the server may stop reading once it has refused the body
        head = await reader.readuntil(b"\r\n\r\n")
        writer.close()
        return Response(int(head.split(b" ")[1]), {}, b"")

    assert asyncio.run(chunked()).status == 413


def test_page_sizes_are_capped_at_200(live: LiveServer, world: dict[str, str], spec) -> None:
    with live.client(world["admin_key"]) as admin:
        episodes = [{"session_id": "s", "summary": f"turn {n}"} for n in range(205)]
        created = admin.post("/api/v1/agents/coder/episodes/batch", json={"episodes": episodes})
        assert created.status_code == 201
        page = admin.get("/api/v1/agents/coder/episodes", params={"limit": 200})
        assert page.status_code == 200
        assert len(page.json()["items"]) == 200
        assert page.json()["next_cursor"] is not None
        limited = [
            (method, template)
            for method, template, operation in operations(spec)
            if any(
                p["name"] == "limit" and p["in"] == "query" for p in operation.get("parameters", [])
            )
        ]
        assert len(limited) >= 4
        for method, template in limited:
            path = _fill(template, _path_values(world))
            for too_big in (201, 10_000, 2**63):
                answer = admin.request(method, path, params={"limit": too_big})
                assert answer.status_code == 400, (path, too_big, answer.text)
        for _, template, operation in operations(spec):
            for param in operation.get("parameters", []):
                if param["name"] == "limit" and param["in"] == "query":
                    assert param["schema"].get("maximum", 10**9) <= 200, template


def test_a_burst_past_the_rate_limit_gets_429_with_retry_after(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        scheduler=False,
        rate_limit_per_minute=30,
        pair_rate_limit_per_minute=5,
    )
    with running(settings) as server:
        key = cli_key(settings, "admin")
        with server.client(key) as admin:
            make_agent(admin, "coder")

        async def burst() -> list[Any]:
            async with server.async_client(key) as client:
                writes = [
                    client.post(
                        "/api/v1/agents/coder/episodes", json={"session_id": "s", "summary": "x"}
                    )
                    for _ in range(60)
                ]
                pairs = [
                    client.post("/api/v1/pair", json={"code": "wrong-code"}) for _ in range(10)
                ]
                return await asyncio.gather(*writes, *pairs)

        began = time.monotonic()
        answers = asyncio.run(burst())
        refilled = int((time.monotonic() - began) * 30 / 60) + 1  # tokens that came back meanwhile
        writes, pairs = answers[:60], answers[60:]
        assert {a.status_code for a in answers} <= {201, 410, 429}
        written = sum(1 for a in writes if a.status_code == 201)
        assert 29 <= written <= 29 + refilled  # 30 a minute, one of them spent on the agent
        assert sum(1 for a in pairs if a.status_code == 410) == 5
        refused = [a for a in answers if a.status_code == 429]
        assert len(refused) == (60 - written) + 5
        for answer in refused:
            assert int(answer.headers["Retry-After"]) >= 1
            assert answer.json()["status_code"] == 429
        stored = server.run(server.services.store.fetchone("SELECT COUNT(*) AS n FROM episodes"))
        assert stored["n"] == written  # refused writes never ran
