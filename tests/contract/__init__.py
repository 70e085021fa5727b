"""Contract tests: the OpenAPI document validates and generates complete, typed clients."""
