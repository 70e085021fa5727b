"""Requests the schema refuses are refused: no query parameter is read from one of many values."""

from __future__ import annotations

import pytest

from tests.helpers import make_agent


@pytest.mark.parametrize(
    "query",
    [
        "status=pending&status=active",
        "status=null&status=null",
        "limit=5&limit=6",
    ],
)
def test_a_repeated_query_parameter_is_400(admin, query) -> None:
    response = admin.get(f"/api/v1/beliefs?{query}")
    assert response.status_code == 400, response.text
    assert "more than once" in response.json()["detail"]


def test_single_query_parameters_still_work(admin) -> None:
    make_agent(admin)
    assert admin.get("/api/v1/beliefs?status=pending&limit=5").status_code == 200
    assert admin.get("/api/v1/agents/coder/episodes?reflected=null").status_code == 200


def test_an_integral_float_fills_an_integer_field_as_json_schema_allows(admin) -> None:
    body = {"id": "coder", "name": "Coder", "reflection": {"recall_k": 5.0, "max_diffs": 1e1}}
    created = admin.post("/api/v1/agents", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["reflection"]["recall_k"] == 5
    assert created.json()["reflection"]["max_diffs"] == 10


@pytest.mark.parametrize("recall_k", [5.5, True, "5"])
def test_a_non_integral_value_is_still_refused_for_an_integer_field(admin, recall_k) -> None:
    body = {"id": "coder", "name": "Coder", "reflection": {"recall_k": recall_k}}
    response = admin.post("/api/v1/agents", json=body)
    assert response.status_code == 400, response.text
    assert "recall_k" in response.json()["detail"]


def test_every_route_refuses_a_repeated_parameter_as_its_document_says(server) -> None:
    from credence.app import openapi_document

    health = openapi_document()["paths"]["/healthz"]["get"]["responses"]
    assert health["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/Problem")
    with server.client() as anonymous:
        assert anonymous.get("/healthz?probe=1&probe=2").status_code == 400
