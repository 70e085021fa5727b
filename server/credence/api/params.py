"""Typed, bounded request parameters shared by the controllers."""

from __future__ import annotations

from typing import Annotated

from litestar.params import HeaderParameter, PathParameter, QueryParameter

from credence.models import END, ID_PATTERN, SLUG_PATTERN

AgentIdPath = Annotated[
    str, PathParameter(pattern=SLUG_PATTERN, max_length=64, description="Agent slug")
]
BeliefIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Belief id")
]
EpisodeIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Episode id")
]
KeyIdPath = Annotated[str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Key id")]
Limit = Annotated[int, QueryParameter(ge=1, le=200, description="Page size (at most 200)")]
Cursor = Annotated[
    str | None,
    QueryParameter(
        pattern=r"^[0-9a-z_]{1,40}" + END,
        max_length=40,
        description="Opaque cursor from next_cursor",
    ),
]
# The documented limits of the decision headers, which the decision fast path also applies.
IF_MATCH_MAX_LENGTH = 40
IDEMPOTENCY_KEY_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}" + END

IfMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-Match",
        max_length=IF_MATCH_MAX_LENGTH,
        description='The ETag of the belief version you decided on, e.g. "3" (required)',
    ),
]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        pattern=IDEMPOTENCY_KEY_PATTERN,
        max_length=128,
        description="Retry-safe key: a retried decision returns the first answer",
    ),
]
