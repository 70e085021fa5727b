"""Spans with the SDK's in-memory exporter: requests, memory operations, LLM calls, reflection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from harness.fakes.llm import FakeLLM
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from credence.cli import main
from credence.observe import tracing
from credence.reflection.llm import ChatClient
from credence.settings import Settings
from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import LiveServer, cli_key, running


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Every span Credence makes during the test, kept in memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        yield exporter
    finally:
        tracing.use_provider(None)
        provider.shutdown()


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    """The finished spans called ``name``."""
    return [span for span in exporter.get_finished_spans() if span.name == name]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    """A server on a fresh data dir."""
    with running(Settings(data_dir=tmp_path / "data", scheduler=False)) as server:
        yield server


def test_requests_and_memory_operations_carry_the_genai_memory_attributes(
    spans: InMemorySpanExporter, live: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with live.client(cli_key(live.settings, "admin")) as admin:
        make_agent(admin, "coder")
        belief = pending_belief(admin, "coder")
        assert decide(admin, belief, "keep").status_code == 200
        context = "/api/v1/agents/coder/memory/context"
        assert admin.get(context, params={"query": "secret plans"}).status_code == 200
        monkeypatch.setenv(tracing.CAPTURE_CONTENT, "true")
        assert admin.get(context, params={"query": "pdf size"}).status_code == 200
        search = admin.post("/api/v1/agents/coder/memory/search", json={"queries": ["ingester"]})
        assert search.status_code == 200

    (request,) = named(spans, "GET /api/v1/agents/{agent_id}/memory/context")[:1]
    assert request.kind is SpanKind.SERVER
    assert request.attributes["http.route"] == "/api/v1/agents/{agent_id}/memory/context"
    assert request.attributes["http.response.status_code"] == 200

    (update,) = named(spans, "update_memory")
    assert update.attributes["gen_ai.operation.name"] == "update_memory"
    assert update.attributes["gen_ai.memory.record.id"] == belief["id"]
    assert update.attributes["gen_ai.memory.store.id"] == "coder"
    assert update.parent is not None  # inside the request's span

    hidden, shown, searched = named(spans, "search_memory coder")
    for read in (hidden, shown, searched):
        assert read.kind is SpanKind.CLIENT
        assert read.attributes["gen_ai.operation.name"] == "search_memory"
        assert read.attributes["gen_ai.memory.store.id"] == "coder"
    assert hidden.attributes["gen_ai.memory.record.count"] == 1
    assert "gen_ai.memory.query.text" not in hidden.attributes  # only when opted in
    assert shown.attributes["gen_ai.memory.query.text"] == "pdf size"
    assert searched.attributes["gen_ai.memory.query.text"] == "ingester"


async def test_an_llm_call_is_a_genai_client_span_with_token_usage(
    spans: InMemorySpanExporter,
) -> None:
    with FakeLLM() as fake:
        fake.answer("[]", usage={"prompt_tokens": 42, "completion_tokens": 7})
        async with httpx.AsyncClient() as http:
            chat = ChatClient(http, fake.url, "tiny-model", None, 5.0, clock=lambda: None)
            messages = [{"role": "user", "content": "hi"}]
            await chat.complete(messages, max_tokens=50, prompt_tokens=5, token_cap=1000)
    (call,) = named(spans, "chat tiny-model")
    assert call.kind is SpanKind.CLIENT
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assert call.attributes["gen_ai.request.model"] == "tiny-model"
    assert call.attributes["gen_ai.usage.input_tokens"] == 42
    assert call.attributes["gen_ai.usage.output_tokens"] == 7
    assert call.attributes["server.address"] == "127.0.0.1"


def test_each_reflection_step_is_a_span_under_the_job(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    data = ["--data", str(tmp_path / "data")]
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"agents": [{"id": "ada", "name": "Ada"}]}))
    assert main(["seed", str(manifest), *data]) == 0
    answer = tmp_path / "answer.txt"
    answer.write_text("[]")
    assert main(["reflect", "ada", "--reflector", "stub", "--stub-output", str(answer), *data]) == 0
    (job,) = named(spans, "reflection job")
    assert job.attributes["credence.agent.id"] == "ada"
    for step in ("pull", "propose", "check", "submit"):
        (span,) = named(spans, f"reflection {step}")
        assert span.parent is not None and span.parent.span_id == job.context.span_id


def test_tracing_is_off_unless_otel_variables_configure_it() -> None:
    assert not tracing.configured({})
    assert tracing.configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert tracing.configured({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318"})
    assert not tracing.configured(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}
    )
    assert not tracing.configured({"OTEL_TRACES_EXPORTER": "none"})


def test_with_tracing_off_spans_are_the_invalid_span_and_touch_no_context() -> None:
    from opentelemetry import context, trace

    before = context.get_current()
    with tracing.request_span("POST", "/api/v1/beliefs/{belief_id}/keep") as request:
        assert request is trace.INVALID_SPAN and not tracing.recording()
        with tracing.memory_span("update_memory", None, record_id="b_1") as memory:
            assert memory is trace.INVALID_SPAN
            assert context.get_current() is before
    client = tracing.start_client_span("push", {"server.address": "127.0.0.1"})
    tracing.end_client_span(client, {"http.response.status_code": 201})
    assert client is trace.INVALID_SPAN


def test_with_a_provider_spans_nest_and_are_recorded(spans: InMemorySpanExporter) -> None:
    with tracing.request_span("GET", "/healthz"), tracing.span("inner"):
        assert tracing.recording()
    (inner,) = named(spans, "inner")
    (outer,) = named(spans, "GET /healthz")
    assert inner.parent is not None and inner.parent.span_id == outer.context.span_id
