"""The authenticated caller: one API key, its scope and the agents it may touch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from credence.errors import Forbidden, NotFound
from credence.models import Scope

if TYPE_CHECKING:
    from credence.db.keys import KeyRecord


class Principal(msgspec.Struct, frozen=True):
    """The authenticated caller: one API key and what it may touch."""

    key_id: str
    scope: Scope
    agents: frozenset[str] | None
    label: str
    # A reviewer key an admin granted writing (episodes, turns, proposals, imports).
    may_write: bool = False

    def sees_agent(self, agent_id: str) -> bool:
        """True when this key may read objects of ``agent_id``."""
        return self.scope == "admin" or self.agents is None or agent_id in self.agents

    def require_agent(self, agent_id: str) -> None:
        """Raise NotFound for an agent outside this key's reach, so its existence is not leaked."""
        if not self.sees_agent(agent_id):
            raise NotFound(f"agent {agent_id!r} not found")

    def visible_agents(self, requested: str | None = None) -> list[str] | None:
        """The agent ids a listing may cover: None means every agent, [] means none."""
        if requested is not None:
            return [requested] if self.sees_agent(requested) else []
        if self.scope == "admin" or self.agents is None:
            return None
        return sorted(self.agents)

    @property
    def may_decide(self) -> bool:
        """Agent keys can never approve, forget, edit or reopen anything."""
        return self.scope != "agent"

    def require_decider(self) -> None:
        """Refuse a key that may not decide (:attr:`may_decide`)."""
        if not self.may_decide:
            raise Forbidden("agent keys cannot decide on beliefs")

    def require_writer(self) -> None:
        """Agent and admin keys write memory input; a reviewer key only with an admin's grant."""
        if self.scope == "reviewer" and not self.may_write:
            raise Forbidden(
                "posting episodes, turns, proposals or imports needs an agent key, or a"
                " reviewer key an admin granted may_write (PATCH /api/v1/keys/{id} or"
                " `credence keys grant-write`)"
            )

    def require_admin(self) -> None:
        """Only admin keys manage agents, keys and pairing codes."""
        if self.scope != "admin":
            raise Forbidden("this needs an admin key")

    def require_reviewer(self) -> None:
        """Admin or reviewer keys, never agent keys."""
        if self.scope not in ("admin", "reviewer"):
            raise Forbidden("this needs a reviewer or admin key")

    @property
    def actor(self) -> str:
        """How this caller appears in the audit trail."""
        return f"key:{self.key_id}"


def principal_from_row(key: KeyRecord) -> Principal:
    """The principal a stored key stands for."""
    return Principal(
        key_id=key.id,
        scope=key.scope,
        agents=frozenset(key.agents) if key.agents is not None else None,
        label=key.label,
        may_write=bool(key.may_write),
    )


class _Authenticated(Protocol):
    @property
    def user(self) -> Any: ...


def admin_only(connection: _Authenticated, _: object) -> None:
    """Route guard: only admin keys (raises Forbidden, which the app answers with 403)."""
    principal: Principal = connection.user
    principal.require_admin()


def reviewer_or_admin(connection: _Authenticated, _: object) -> None:
    """Route guard: admin or reviewer keys, never agent keys."""
    principal: Principal = connection.user
    principal.require_reviewer()
