"""JSON routes take JSON only: a cross-origin form or text/plain POST is 415 and changes nothing."""

from __future__ import annotations

import json

import pytest

from credence.api.strict import is_json_media_type

AGENTS = "/api/v1/agents"


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "text/json",
        None,
    ],
)
def test_a_non_json_body_is_415_and_stores_nothing(admin, content_type) -> None:
    body = json.dumps({"id": "planted", "name": "Planted"}).encode()
    headers = {"Content-Type": content_type} if content_type else {}
    response = admin.post(AGENTS, content=body, headers=headers)
    assert response.status_code == 415, response.text
    assert response.json()["status_code"] == 415
    assert admin.get(f"{AGENTS}/planted").status_code == 404


def test_an_unauthenticated_json_route_refuses_text_plain_too(server) -> None:
    body = json.dumps({"token": "a.b.c", "action": "keep"})
    with server.client() as anonymous:
        response = anonymous.post(
            "/api/v1/push/actions", content=body, headers={"Content-Type": "text/plain"}
        )
    assert response.status_code == 415, response.text


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"]
)
def test_json_bodies_are_accepted(admin, content_type) -> None:
    agent = f"agent-{abs(hash(content_type)) % 1000}"
    body = json.dumps({"id": agent, "name": "A"})
    response = admin.post(AGENTS, content=body, headers={"Content-Type": content_type})
    assert response.status_code == 201, response.text


def test_json_media_types() -> None:
    assert is_json_media_type("application/json")
    assert is_json_media_type("application/merge-patch+json")
    assert is_json_media_type("application/problem+json; charset=utf-8")
    for other in (
        None,
        "",
        "text/plain",
        "application/jsonx",
        "text/x+json",
        "application/a/b+json",
    ):
        assert not is_json_media_type(other), other


def test_the_document_declares_415_on_every_operation_with_a_body(server) -> None:
    with server.client() as client:
        document = client.get("/api/v1/openapi.json").json()
    with_body = [
        (path, method, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "requestBody" in operation
    ]
    assert with_body
    for path, method, operation in with_body:
        assert "415" in operation["responses"], (method, path)
