"""Decisions at the API edge: Idempotency-Key replay around one domain decision, as HTTP."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import msgspec
from litestar.types import ASGIApp, Receive, Scope, Send

from credence.access.principal import Principal
from credence.api.errors import problem_of
from credence.api.params import IDEMPOTENCY_KEY_PATTERN, IF_MATCH_MAX_LENGTH
from credence.clock import rfc3339
from credence.db import idempotency
from credence.db.idempotency import Remembered
from credence.errors import DomainError, Unprocessable
from credence.memory.lifecycle.beliefs import ACTION_OF, BeliefService, belief_of
from credence.memory.lifecycle.decisions import Decision, Transition, etag
from credence.models import ID_PATTERN
from credence.observe import tracing

if TYPE_CHECKING:
    from credence.db.engine import Connection, Row, Statement

_BELIEF_ID = re.compile(ID_PATTERN)
_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)


def fingerprint(belief_id: str, decision: Decision) -> str:
    """What an Idempotency-Key is bound to: the belief, the decision and its content."""
    request = [belief_id, ACTION_OF[type(decision)], decision.payload()]
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()


def answer_of(outcome: Transition | DomainError, request: str) -> Remembered:
    """The HTTP answer to a decision (the belief with its ETag, or the refusal's Problem)."""
    if isinstance(outcome, DomainError):
        status, body, headers = problem_of(outcome)
        return Remembered(request, status, msgspec.json.encode(body), headers or {})
    belief = belief_of(outcome.state.after)
    return Remembered(request, 200, msgspec.json.encode(belief), {"ETag": etag(belief.version)})


class Decisions:
    """Keep / Forget / Edit / Reopen with If-Match and Idempotency-Key semantics.

    A request with both headers is decided once per key: its answer (success or refusal) is
    stored in the deciding transaction — a success in the same statement batch as the
    decision — and replayed to a retry, on any replica. Twins wait on the key's hold (an
    advisory lock on PostgreSQL, the one writer on SQLite), so the second finds the first's
    answer rather than deciding again. A request without If-Match is answered 428 whatever
    its Idempotency-Key: replaying the answer to another request that had one would hide
    what is missing.
    """

    def __init__(self, beliefs: BeliefService) -> None:
        self.beliefs = beliefs

    @tracing.update_memory_span
    async def decide(
        self,
        belief_id: str,
        decision: Decision,
        principal: Principal,
        *,
        if_match: str | None,
        idempotency_key: str | None,
    ) -> Remembered:
        """Decide, or replay the answer stored under this key's Idempotency-Key."""
        beliefs = self.beliefs
        request = fingerprint(belief_id, decision)
        prepared, embedded = await beliefs.prepare(decision)
        now = rfc3339(beliefs.clock())
        idem_key = idempotency_key if if_match is not None else None

        def replay(rows: list[Row]) -> Remembered | None:
            seen = idempotency.found(rows)
            if seen is None or seen.fingerprint == request:
                return seen
            reused = "this Idempotency-Key was already used with a different request"
            return answer_of(Unprocessable(reused), request)

        async def work(conn: Connection) -> tuple[Remembered, Transition | None]:
            answers: list[Remembered] = []

            def remembering(transition: Transition) -> list[Statement]:
                assert idem_key is not None
                answers.append(answer_of(transition, request))
                return [idempotency.remembering(principal.key_id, idem_key, answers[0], now)]

            # The key's hold and stored answer, and the belief, in one trip to the database.
            lookups = (
                idempotency.lookup(conn, principal.key_id, idem_key) if idem_key is not None else []
            )
            subject = beliefs.subject_query(conn, belief_id, prepared)
            *looked, subject_rows = await conn.rows_together([*lookups, subject])
            if idem_key is not None and (seen := replay(looked[-1])) is not None:
                return seen, None
            outcome = await beliefs.decide_in(
                conn,
                belief_id,
                prepared,
                principal,
                if_match=if_match,
                embedded=embedded,
                now=now,
                also=remembering if idem_key is not None else None,
                subject_rows=subject_rows,
            )
            if isinstance(outcome, Transition):
                return (answers[0] if answers else answer_of(outcome, request)), outcome
            refusal = answer_of(outcome, request)
            if idem_key is not None:
                await idempotency.remember(conn, principal.key_id, idem_key, refusal, now)
            return refusal, None

        answer, transition = await beliefs.store.write(work, inline=True)
        if transition is not None:
            beliefs.committed(prepared, transition)
        return answer


def plain_decision_headers(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, str | None] | None:
    """(If-Match, Idempotency-Key) of a bodiless decision whose headers are plainly valid;
    None when the documented handler must judge them (a body, a repeated or odd header)."""
    if_match: str | None = None
    idempotency_key: str | None = None
    for name, value in headers:
        if name == b"if-match":
            if if_match is not None or len(value) > IF_MATCH_MAX_LENGTH:
                return None
            if_match = value.decode("latin-1")
        elif name == b"idempotency-key":
            key = value.decode("latin-1")
            if idempotency_key is not None or not _IDEMPOTENCY_KEY.match(key):
                return None
            idempotency_key = key
        elif name in (b"content-type", b"transfer-encoding") or (
            name == b"content-length" and value != b"0"
        ):
            return None
    if if_match is None:
        return None
    return if_match, idempotency_key


def fast_decision(decision: Decision) -> Callable[[ASGIApp], ASGIApp]:
    """Route middleware for the swipe: decide a plainly valid bodiless request directly.

    It runs after the router's authentication and rate limiting and inside the security
    headers, and skips only the framework's per-request parameter and response machinery:
    the same ``Decisions.decide`` gives the same stored answer, sent as the handler sends it.
    Anything not plainly valid — a body, a query string, an agent key, an odd header — falls
    through to the documented handler.
    """

    def wrap(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            principal = scope.get("user")
            belief_id = scope.get("path_params", {}).get("belief_id")
            plain = None if scope.get("query_string") else plain_decision_headers(scope["headers"])
            if (
                plain is None
                or not isinstance(principal, Principal)
                or not principal.may_decide
                or not isinstance(belief_id, str)
                or not _BELIEF_ID.fullmatch(belief_id)
            ):
                await app(scope, receive, send)
                return
            if_match, idempotency_key = plain
            decisions = Decisions(scope["app"].state.services.beliefs)
            answer = await decisions.decide(
                belief_id, decision, principal, if_match=if_match, idempotency_key=idempotency_key
            )
            headers = [
                *(
                    (name.lower().encode("latin-1"), value.encode("latin-1"))
                    for name, value in answer.headers.items()
                ),
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(answer.body)),
            ]
            await send(
                {"type": "http.response.start", "status": answer.status_code, "headers": headers}
            )
            await send({"type": "http.response.body", "body": answer.body, "more_body": False})

        return middleware

    return wrap
