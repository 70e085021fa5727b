"""Schemathesis hooks for the fuzz suite (loaded through `hooks` in schemathesis.toml)."""

from __future__ import annotations

from typing import Any

import schemathesis

# Framing headers: a value the HTTP parser cannot frame the message with is refused by uvicorn
# (400, text/plain) before the app sees the request, so such a case tests the parser, not the API.
FRAMING_HEADERS = ("transfer-encoding", "content-length")


@schemathesis.hook
def filter_case(context: Any, case: Any) -> bool:
    """Drop cases that cannot reach the API's own logic.

    Stateful steps whose path came from a null in a list (``results[*].belief_id``): schemathesis
    skips a link value that is null, but not a null picked from a wildcard match, and sends it as
    the text "None"; the API rightly refuses that id, so the case tests nothing. And cases with an
    undeclared framing header (``FRAMING_HEADERS``), which never reach the app.
    """
    if None in (case.path_parameters or {}).values():
        return False
    return not any(name.lower() in FRAMING_HEADERS for name in (case.headers or {}))
