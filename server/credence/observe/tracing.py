"""OpenTelemetry spans: requests, reflection steps, LLM calls, pushes and memory operations.

Tracing is off unless the standard OTEL_* variables configure an exporter; then spans go to an
OTLP/HTTP collector in batches. Query text goes on a span only when
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

INSTRUMENTATION = "credence"
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# Any of these names an exporter or a collector; without one no span is recorded.
_CONFIGURING = (
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
)
_TRUE = ("1", "true", "yes", "on")

_provider: TracerProvider | None = None
Decision = TypeVar("Decision", bound=Callable[..., Awaitable[Any]])


def configured(env: Mapping[str, str] | None = None) -> bool:
    """True when the environment asks for traces (and OTEL_SDK_DISABLED does not forbid them)."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return any(env.get(name, "").strip() for name in _CONFIGURING)


def setup(env: Mapping[str, str] | None = None) -> TracerProvider | None:
    """Install a batching OTLP/HTTP provider once per process when OTEL_* configures one."""
    global _provider
    if _provider is not None or not configured(env):
        return _provider
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from credence import __version__

    provider = SdkTracerProvider(
        resource=Resource.create({"service.name": "credence", "service.version": __version__})
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _provider = provider
    return provider


def use_provider(provider: TracerProvider | None) -> None:
    """Send spans to ``provider`` (tests use the SDK's in-memory exporter); None: the global."""
    global _provider
    _provider = provider


def shutdown() -> None:
    """Flush the spans still batched (at server shutdown)."""
    flush = getattr(_provider, "shutdown", None)
    if flush is not None:
        flush()


def _tracer() -> Tracer | None:
    """The configured provider's tracer; None when tracing is off.

    Without a provider nothing is recorded, so spans are skipped outright: OpenTelemetry's
    no-op spans still attach and detach context, about 10 µs of CPU per span per request.
    """
    return _provider.get_tracer(INSTRUMENTATION) if _provider is not None else None


@contextmanager
def _current(name: str, kind: SpanKind, attributes: dict[str, Any]) -> Iterator[Span]:
    """A span made current for the block; with tracing off, the invalid span."""
    tracer = _tracer()
    if tracer is None:
        yield trace.INVALID_SPAN
        return
    with tracer.start_as_current_span(name, kind=kind, attributes=attributes) as current:
        yield current


def capture_content(env: Mapping[str, str] | None = None) -> bool:
    """True when query text may be put on spans (an explicit opt-in)."""
    env = os.environ if env is None else env
    return env.get(CAPTURE_CONTENT, "").strip().lower() in _TRUE


@contextmanager
def request_span(method: str, route: str) -> Iterator[Span]:
    """A server span for one HTTP request, named after its route template."""
    with _current(
        f"{method} {route}",
        SpanKind.SERVER,
        {"http.request.method": method, "http.route": route},
    ) as span:
        yield span


def start_client_span(name: str, attributes: dict[str, Any]) -> Span:
    """A client span the caller ends with end_client_span (a push, between two lines)."""
    tracer = _tracer()
    if tracer is None:
        return trace.INVALID_SPAN
    return tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)


def end_client_span(current: Span, attributes: dict[str, Any]) -> None:
    """Add the outcome's attributes and end the span."""
    current.set_attributes(attributes)
    current.end()


def end_request(span: Span, status: int) -> None:
    """Record the response status (a 5xx marks the span as an error)."""
    span.set_attribute("http.response.status_code", status)
    if status >= 500:
        span.set_status(Status(StatusCode.ERROR))


@contextmanager
def span(
    name: str, attributes: dict[str, Any] | None = None, kind: SpanKind = SpanKind.INTERNAL
) -> Iterator[Span]:
    """An internal span; an exception escaping it marks it as an error."""
    with _current(name, kind, attributes or {}) as current:
        yield current


@contextmanager
def memory_span(
    operation: str,
    store_id: str | None,
    *,
    record_id: str | None = None,
    query: str | None = None,
) -> Iterator[Span]:
    """A GenAI memory operation (search_memory, update_memory) on one agent's memory store."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": operation}
    if store_id is not None:
        attributes["gen_ai.memory.store.id"] = store_id
    if record_id is not None:
        attributes["gen_ai.memory.record.id"] = record_id
    if query and capture_content():
        attributes["gen_ai.memory.query.text"] = query
    with _current(
        f"{operation} {store_id}" if store_id else operation, SpanKind.CLIENT, attributes
    ) as current:
        yield current


def update_memory_span(method: Decision) -> Decision:
    """Decorate ``decide(self, belief_id, …)``: each call is one ``update_memory`` span."""

    @functools.wraps(method)
    async def traced(self: Any, belief_id: str, *args: Any, **kwargs: Any) -> Any:
        with memory_span("update_memory", None, record_id=belief_id) as current:
            outcome = await method(self, belief_id, *args, **kwargs)
            current.set_attribute("credence.decision.status", outcome.status_code)
            return outcome

    return traced  # type: ignore[return-value]


def recording() -> bool:
    """True when the current span is recorded (tracing is configured and sampling it)."""
    return trace.get_current_span().is_recording()


def annotate_store(store_id: str) -> None:
    """Name the memory store on the current span once it is known (a decision's agent)."""
    trace.get_current_span().set_attribute("gen_ai.memory.store.id", store_id)


@contextmanager
def llm_span(provider: str, model: str, address: str | None) -> Iterator[Span]:
    """A GenAI client span for one chat call; the caller adds the token usage."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }
    if address:
        attributes["server.address"] = address
    with _current(f"chat {model}", SpanKind.CLIENT, attributes) as current:
        yield current


def record_usage(current: Span, input_tokens: int | None, output_tokens: int | None) -> None:
    """The token usage of an LLM call, on its span."""
    if input_tokens is not None:
        current.set_attribute("gen_ai.usage.input_tokens", input_tokens)
    if output_tokens is not None:
        current.set_attribute("gen_ai.usage.output_tokens", output_tokens)
