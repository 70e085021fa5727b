"""openapi-python-client makes a complete typed client of openapi.yaml, and it works live."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from credence.settings import Settings
from tests.contract.tools import OPENAPI
from tests.livesrv import cli_key, running

PACKAGE = "credence_client"


def _snake(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """The client package generated from openapi.yaml; generation must not warn."""
    out = tmp_path_factory.mktemp("python-client")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    completed = subprocess.run(
        [
            Path(sys.executable).parent / "openapi-python-client",
            "generate",
            "--path",
            str(OPENAPI),
            "--meta",
            "none",
            "--output-path",
            str(out / PACKAGE),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=out,
        timeout=300,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "Warning" not in output and "Unable to" not in output, output
    return out


@pytest.fixture(scope="module")
def client_package(generated) -> ModuleType:
    sys.path.insert(0, str(generated))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(generated))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


@pytest.mark.slow
def test_every_operation_is_generated(generated) -> None:
    document = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    operations = {
        _snake(operation["operationId"])
        for item in document["paths"].values()
        for operation in item.values()
    }
    modules = {path.stem for path in (generated / PACKAGE / "api").glob("*/*.py")} - {"__init__"}
    assert operations == modules
    assert "create_turn" in modules


def _api(package: ModuleType, name: str) -> ModuleType:
    (module,) = [
        importlib.import_module(f"{package.__name__}.api.{path.parent.name}.{path.stem}")
        for path in Path(package.__file__).parent.glob(f"api/*/{name}.py")
    ]
    return module


@pytest.mark.slow
def test_a_short_flow_through_the_generated_client(tmp_path, client_package) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    api = lambda name: _api(client_package, name)  # noqa: E731
    settings = Settings(data_dir=tmp_path / "data", scheduler=False)
    with running(settings) as server:
        key = cli_key(settings, "admin", label="generated client")
        with client_package.AuthenticatedClient(
            base_url=server.url, token=key, raise_on_unexpected_status=True
        ) as client:
            created = api("create_agent").sync_detailed(
                client=client, body=models.AgentIn(id="coder", name="Coder")
            )
            assert created.status_code == 201
            assert isinstance(created.parsed, models.Agent)
            assert isinstance(created.parsed.created_at, datetime)

            turn = models.TurnIn(
                session_id="s1",
                messages=[
                    models.TurnMessageIn(role="user", content="Convert the 40MB PDF to text"),
                    models.TurnMessageIn(
                        role="assistant", content="The ingester ran out of memory."
                    ),
                ],
            )
            reported = api("create_turn").sync_detailed("coder", client=client, body=turn)
            assert reported.status_code == 201, reported.content
            episode = reported.parsed.episode
            assert episode.origin == models.Origin.CLEAN and isinstance(
                episode.finished_at, datetime
            )

            proposal = models.ProposalIn(
                op=models.BeliefOp.ADD,
                belief="PDFs over 10MB exhaust the ingester",
                confidence=0.8,
                source_episodes=[episode.id],
            )
            proposed = api("propose_beliefs").sync(
                "coder", client=client, body=models.ProposalsIn(proposals=[proposal])
            )
            (result,) = proposed.results
            assert result.accepted, result

            page = api("list_beliefs").sync(client=client, status=models.BeliefStatus.PENDING)
            (belief,) = page.items
            assert belief.id == result.belief_id and belief.status is models.BeliefStatus.PENDING
            assert belief.provenance in set(models.Provenance)

            fetched = api("get_belief").sync_detailed(belief.id, client=client)
            etag = fetched.headers["etag"]
            kept = api("keep_belief").sync_detailed(belief.id, client=client, if_match=etag)
            assert kept.status_code == 200 and kept.parsed.status is models.BeliefStatus.ACTIVE

            stale = api("forget_belief").sync_detailed(
                belief.id, client=client, body=models.ForgetIn(), if_match=etag
            )
            assert stale.status_code == 412
            assert isinstance(stale.parsed, models.Problem)
            assert isinstance(stale.parsed.extra, models.ProblemExtra)
            assert stale.parsed.extra.current_etag == kept.headers["etag"] == '"2"'

            missing = api("get_belief").sync_detailed("blf_" + "0" * 26, client=client)
            assert missing.status_code == 404 and isinstance(missing.parsed, models.Problem)
            assert "not found" in missing.parsed.detail

            refused = api("list_beliefs").sync_detailed(client=client, limit=0)
            assert refused.status_code == 400 and isinstance(refused.parsed, models.Problem)

            markdown = api("export_memory_markdown").sync("coder", client=client)
            assert isinstance(markdown, str) and "PDFs over 10MB exhaust the ingester" in markdown
            exported = api("export_memory").sync("coder", client=client)
            assert [b.content for b in exported.beliefs] == ["PDFs over 10MB exhaust the ingester"]

            job_in = models.JobIn(
                workflow_id=models.WorkflowId.AGENT_REFLECTION,
                input_data=models.JobInputIn(
                    agent_id="coder", reflector=models.ReflectorName.HEURISTIC
                ),
            )
            submitted = api("submit_job").sync_detailed(client=client, body=job_in)
            assert submitted.status_code == 202
            assert submitted.headers["location"] == f"/api/v1/jobs/{submitted.parsed.id}"
            assert isinstance(submitted.parsed.input_data, models.JobInput)
            assert submitted.parsed.input_data.reflector is models.ReflectorName.HEURISTIC
