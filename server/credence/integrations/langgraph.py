"""A LangGraph ``BaseStore`` backed by Credence: writes are proposals, reads are kept memory.

``CredenceStore(url=..., api_key=...)`` maps each namespace to an agent (by default its first
label is the agent id; pass ``agent_id`` or ``agent_for`` to choose). What maps:

- ``put`` proposes the value's ``text`` (or ``content``) as a belief: it waits, pending, for a
  human's Keep and is never active before. Putting to the key of a kept belief proposes a
  ``supersede`` of it. The other fields of the value travel as metadata in the rationale.
- ``get`` and ``search`` return active beliefs only (``search`` with a query ranks by
  relevance through the memory-context path; without one it lists kept memory).
- ``delete`` proposes ``forget`` of a kept belief (a human decides).
- ``list_namespaces`` lists the agents the key can see, as one-label namespaces.

What does not map raises ``NotImplementedError``: a TTL (a human, not a clock, decides what is
kept), a value without text (arbitrary JSON has no belief to review), filter operators other
than equality. ``index`` is accepted and ignored: Credence indexes every belief itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from credence.integrations.remote import Remote, RemoteError, agent_path

log = logging.getLogger(__name__)
_BELIEF_ID = re.compile(r"b_[0-9a-z]{26}")
_KEY_TAG = "[langgraph key={key}]"
MAX_CONTEXT = 50
PAGE = 200
# A put's other fields ride in the rationale (4000 characters) after this mark, with where the
# text sat in the value, so a read returns the value in the shape it was put.
_METADATA = " Metadata: "
_TEXT_AT = "_credence_text_at"
MAX_METADATA = 3500


def _metadata(rationale: str) -> dict[str, Any]:
    """The fields a put stored beside the text ({} for beliefs not written through LangGraph)."""
    _, mark, tail = rationale.partition(_METADATA)
    try:
        found = json.loads(tail) if mark else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def belief_text(value: Any) -> tuple[str, tuple[str, ...]]:
    """The belief a value carries and where: ``text`` or ``content``, or one level down
    (LangMem stores ``{"kind": "Memory", "content": {"content": ...}}``)."""
    for name in ("text", "content"):
        found = value.get(name) if isinstance(value, dict) else None
        if isinstance(found, str) and found.strip():
            return found, (name,)
        for inner in ("content", "text"):
            nested = found.get(inner) if isinstance(found, dict) else None
            if isinstance(nested, str) and nested.strip():
                return nested, (name, inner)
    raise NotImplementedError(
        "CredenceStore keeps beliefs, which are text: give the value a 'text' or 'content'"
        " string (other JSON values have no belief for a human to review)"
    )


class CredenceStore(BaseStore):
    """LangGraph long-term memory where every write is reviewed by a human in Credence."""

    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        agent_id: str | None = None,
        agent_for: Callable[[tuple[str, ...]], str] | None = None,
        confidence: float = 0.7,
        timeout: float = 30.0,
    ) -> None:
        self.remote = Remote(url.rstrip("/"), api_key, timeout)
        self.agent_id = agent_id
        self.agent_for = agent_for
        self.confidence = confidence

    # --- namespaces ----------------------------------------------------------------------------

    def agent_of(self, namespace: tuple[str, ...]) -> str:
        """The agent a namespace is stored under."""
        if self.agent_id:
            return self.agent_id
        if self.agent_for is not None:
            return self.agent_for(namespace)
        if not namespace:
            raise ValueError("an empty namespace names no agent: pass agent_id= or agent_for=")
        return namespace[0]

    # --- the batch interface --------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each operation in order against the server."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op))
            else:
                raise NotImplementedError(f"CredenceStore does not know the operation {op!r}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` on a worker thread, so the event loop never waits on the network."""
        return await asyncio.to_thread(self.batch, list(ops))

    # --- operations ----------------------------------------------------------------------------

    def _item(self, namespace: tuple[str, ...], key: str, belief: dict[str, Any]) -> Item:
        return Item(
            value=self._value(belief),
            key=key,
            namespace=namespace,
            created_at=_stamp(belief["created_at"]),
            updated_at=_stamp(belief["updated_at"]),
        )

    @staticmethod
    def _value(belief: dict[str, Any]) -> dict[str, Any]:
        """The value as it was put (kept text in its place), else ``{"text", "content"}``."""
        shape = _metadata(belief["rationale"])
        at = shape.pop(_TEXT_AT, None)
        if not isinstance(at, list) or not 1 <= len(at) <= 2:
            return {**shape, "text": belief["content"], "content": belief["content"]}
        if len(at) == 1:
            return {**shape, at[0]: belief["content"]}
        inner = shape.get(at[0])
        return {
            **shape,
            at[0]: {**(inner if isinstance(inner, dict) else {}), at[1]: belief["content"]},
        }

    def _find(self, agent: str, key: str) -> dict[str, Any] | None:
        """The agent's belief a key names: its id, or the key a put tagged it with."""
        if _BELIEF_ID.fullmatch(key):
            status, data = self.remote.request("GET", f"/beliefs/{key}")
            if status == 404:
                return None
            if status != 200:
                raise RemoteError(status, f"HTTP {status} reading belief {key}")
            belief = json.loads(data)
            return belief if belief["agent_id"] == agent else None
        tag = _KEY_TAG.format(key=key)
        return next((b for b in self._active(agent) if tag in b["rationale"]), None)

    def _active(self, agent: str) -> list[dict[str, Any]]:
        beliefs: list[dict[str, Any]] = []
        query = {"status": "active", "limit": str(PAGE)}
        while True:
            page = self.remote.json("GET", agent_path(agent, "/memory/beliefs"), query=query)
            beliefs += page["items"]
            if not page.get("next_cursor"):
                return beliefs
            query = {**query, "cursor": page["next_cursor"]}

    def _get(self, op: GetOp) -> Item | None:
        belief = self._find(self.agent_of(op.namespace), op.key)
        if belief is None or belief["status"] != "active":
            return None
        return self._item(op.namespace, op.key, belief)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        for name, expected in (op.filter or {}).items():
            if isinstance(expected, dict):
                raise NotImplementedError(
                    f"CredenceStore filters by equality only; {name}: {expected} uses an operator"
                )
        agent = self.agent_of(op.namespace_prefix)
        wanted = op.offset + op.limit
        if op.query:
            context = self.remote.json(
                "GET",
                agent_path(agent, "/memory/context"),
                query={"query": op.query[:1000], "limit": str(min(MAX_CONTEXT, wanted))},
            )
            ranked = [note["belief_id"] for note in context["memory_notes"]]
            by_id = {b["id"]: b for b in self._active(agent)}
            found = [by_id[i] for i in ranked if i in by_id]
        else:
            found = self._active(agent)
        found = [b for b in found if _matches(self._value(b), op.filter)]
        count = len(found)
        return [
            SearchItem(
                namespace=op.namespace_prefix,
                key=belief["id"],
                value=self._value(belief),
                created_at=_stamp(belief["created_at"]),
                updated_at=_stamp(belief["updated_at"]),
                score=(count - rank) / count if op.query else None,
            )
            for rank, belief in enumerate(found)
        ][op.offset : wanted]

    def _put(self, op: PutOp) -> None:
        if op.ttl is not None:
            raise NotImplementedError(
                "CredenceStore does not expire memories: a human, not a TTL, decides what is"
                " kept (pass ttl=None)"
            )
        agent = self.agent_of(op.namespace)
        if op.value is None:
            return self._forget(agent, op)
        text, at = belief_text(op.value)
        shape = {k: v for k, v in op.value.items() if k != at[0]}
        if len(at) == 2:
            shape[at[0]] = {k: v for k, v in op.value[at[0]].items() if k != at[1]}
        metadata = json.dumps({**shape, _TEXT_AT: list(at)}, default=str)
        if len(metadata) > MAX_METADATA:
            raise NotImplementedError(
                f"CredenceStore keeps at most {MAX_METADATA} characters of metadata beside the"
                " text; this value's other fields are larger"
            )
        where = "/".join(op.namespace)
        rationale = (
            f"Written through LangGraph {_KEY_TAG.format(key=op.key)} in {where}."
            f"{_METADATA}{metadata}"
        )
        proposal: dict[str, Any] = {
            "op": "add",
            "belief": text,
            "confidence": self.confidence,
            "rationale": rationale,
        }
        current = self._find(agent, op.key)
        if current is not None and current["status"] == "active":
            proposal.update(op="supersede", target_belief_id=current["id"])
        result = self._propose(agent, proposal)
        if not result["accepted"]:
            log.warning(
                "Credence did not take the put of %r: %s", op.key, result["rejected_reason"]
            )
        return None

    def _forget(self, agent: str, op: PutOp) -> None:
        current = self._find(agent, op.key)
        if current is None or current["status"] != "active":
            raise KeyError(f"no kept belief of {agent} under key {op.key!r} to forget")
        self._propose(
            agent,
            {
                "op": "forget",
                "belief": current["content"],
                "confidence": current["confidence"],
                "target_belief_id": current["id"],
                "rationale": f"Deleted through LangGraph {_KEY_TAG.format(key=op.key)}.",
            },
        )

    def _propose(self, agent: str, proposal: dict[str, Any]) -> dict[str, Any]:
        (result,) = self.remote.json(
            "POST",
            agent_path(agent, "/memory/beliefs/proposals"),
            body={"proposals": [proposal]},
        )["results"]
        return result

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        agents: list[str] = []
        query = {"limit": str(PAGE)}
        while True:  # the agents this key can see
            page = self.remote.json("GET", "/agents", query=query)
            agents += [agent["id"] for agent in page["items"]]
            if not page.get("next_cursor"):
                break
            query = {**query, "cursor": page["next_cursor"]}
        found: list[tuple[str, ...]] = [(agent,) for agent in sorted(agents)]
        conditions = op.match_conditions or ()
        found = [ns for ns in found if all(_namespace_matches(ns, c) for c in conditions)]
        if op.max_depth is not None:
            found = sorted({ns[: op.max_depth] for ns in found})
        return found[op.offset : op.offset + op.limit]


def _matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return all(value.get(name) == expected for name, expected in (wanted or {}).items())


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(want in ("*", have) for want, have in zip(path, part, strict=True))
