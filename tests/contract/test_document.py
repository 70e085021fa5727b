"""openapi.yaml is a valid OpenAPI 3.1 document: three validators agree, and its shape is typed."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate

from credence.app import openapi_document
from tests.contract.tools import OPENAPI, json_output, run_node_tool


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))


def test_openapi_spec_validator_finds_no_errors(document) -> None:
    validate(document)


@pytest.mark.slow
def test_redocly_recommended_ruleset_finds_no_problems() -> None:
    linted = run_node_tool("redocly", "lint", str(OPENAPI), "--format", "json")
    totals = json_output(linted)["totals"]
    print("redocly lint:", totals)
    assert totals["errors"] == 0 and totals["warnings"] == 0, linted.stdout[-4000:]
    assert linted.returncode == 0, linted.stderr[-2000:]


@pytest.mark.slow
def test_spectral_oas_ruleset_finds_no_problems() -> None:
    linted = run_node_tool(
        "spectral", "lint", str(OPENAPI), "--ruleset", ".spectral.yaml", "--format", "json"
    )
    problems = json_output(linted)
    print("spectral lint:", len(problems), "problems")
    assert problems == [], problems[:20]
    assert linted.returncode == 0, linted.stderr[-2000:]


def _schemas(node: Any, path: str = "#") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        found.append((path, node))
        for key, value in node.items():
            found.extend(_schemas(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_schemas(value, f"{path}/{index}"))
    return found


def test_timestamps_are_date_times_wherever_they_appear() -> None:
    components = openapi_document()["components"]["schemas"]
    for name, schema in components.items():
        for field, prop in schema.get("properties", {}).items():
            if field == "at" or field.endswith("_at"):
                variants = prop.get("anyOf", [prop])
                formats = {v.get("format") for v in variants if v.get("type") == "string"}
                assert formats == {"date-time"}, f"{name}.{field} is not a date-time: {prop}"


def test_no_format_or_constraint_sits_beside_a_one_of() -> None:
    for path, node in _schemas(openapi_document()):
        if "oneOf" in node or "anyOf" in node:
            beside = {"format", "pattern", "maxLength", "minLength", "minimum", "maximum"} & set(
                node
            )
            assert not beside, (
                f"{path}: {sorted(beside)} beside a oneOf/anyOf is lost by generators"
            )


def test_every_response_header_has_a_schema_and_errors_declare_theirs() -> None:
    document = openapi_document()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                for name, header in response.get("headers", {}).items():
                    assert "schema" in header, f"{method} {path} {status} {name} has no schema"
                if status == "429":
                    assert "Retry-After" in response["headers"]
                if status == "412":
                    assert "ETag" in response["headers"]
    submit = document["paths"]["/api/v1/jobs"]["post"]["responses"]["202"]
    assert submit["headers"]["Location"]["schema"]["type"] == "string"


def test_enums_are_shared_components_not_copies() -> None:
    document = openapi_document()
    schemas = document["components"]["schemas"]
    assert schemas["Belief"]["properties"]["status"]["$ref"] == "#/components/schemas/BeliefStatus"
    assert schemas["Episode"]["properties"]["origin"]["$ref"] == "#/components/schemas/Origin"
    parameters = document["paths"]["/api/v1/beliefs"]["get"]["parameters"]
    (status,) = [p for p in parameters if p["name"] == "status"]
    # The server reads ?status=null as absent, so null stays beside the one shared enum.
    assert status["schema"]["anyOf"] == [
        {"$ref": "#/components/schemas/BeliefStatus"},
        {"type": "null"},
    ]
    for path, node in _schemas(document["paths"]):
        if "enum" in node:
            assert None not in node["enum"], f"{path}: a null enum member makes per-use classes"


def test_document_is_described_for_integrators() -> None:
    document = openapi_document()
    assert document["info"]["license"]["identifier"] == "Apache-2.0"
    assert document["info"]["contact"]["name"]
    used = {
        tag for item in document["paths"].values() for op in item.values() for tag in op["tags"]
    }
    described = {tag["name"] for tag in document["tags"] if tag.get("description")}
    assert used == described, "describe each tag in openapi_doc.TAG_DESCRIPTIONS"


def test_job_and_wake_input_data_are_typed_by_their_structs() -> None:
    schemas = openapi_document()["components"]["schemas"]
    assert schemas["Job"]["properties"]["input_data"] == {"$ref": "#/components/schemas/JobInput"}
    assert schemas["Wake"]["properties"]["input_data"] == {"$ref": "#/components/schemas/WakeInput"}
    problem_extra = schemas["Problem"]["properties"]["extra"]["anyOf"]
    assert {"$ref": "#/components/schemas/ProblemExtra"} in problem_extra
    assert re.search("current_etag", str(schemas["ProblemExtra"]))
