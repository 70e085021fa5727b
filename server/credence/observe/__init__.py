"""Operations: Prometheus metrics and OpenTelemetry spans, shared by every layer."""
