"""The `credence agents` command: create and list agents on the data dir or --database-url."""

from __future__ import annotations

import argparse
import sys

import msgspec

from credence.cli import _data_flag, command, missing_data, settings_from, with_store


def _agents_flags(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="agents_action", required=True)
    create = sub.add_parser("create", help="create an agent")
    create.add_argument("agent_id", metavar="ID", help="the agent's slug (a-z, 0-9, _ and -)")
    create.add_argument("--name", required=True, help="a name people read")
    create.add_argument(
        "--role", action="append", dest="roles", default=[], help="a role (repeatable)"
    )
    _data_flag(create)
    listing = sub.add_parser("list", help="list agents with their pending and kept beliefs")
    _data_flag(listing)


@command("agents", "create or list agents", _agents_flags)
def agents_command(args: argparse.Namespace) -> int:
    """Create an agent (no admin key or HTTP needed) or list the agents in the store."""
    from credence.access.agents import create_agent
    from credence.access.principal import Principal
    from credence.clock import system_clock
    from credence.errors import DomainError
    from credence.models import AgentIn

    settings = settings_from(args)
    if args.agents_action == "create":
        try:
            data = msgspec.convert(
                {"id": args.agent_id, "name": args.name, "roles": args.roles}, AgentIn
            )
        except msgspec.ValidationError as exc:
            wrong = {"$.id": f"ID must be a slug of a-z, 0-9, _ and - (got {args.agent_id!r})"}
            where = str(exc).rsplit(" - at ", 1)[-1].strip("`")
            print(f"error: {wrong.get(where, exc)}", file=sys.stderr)
            return 2
        try:
            agent = with_store(settings, lambda store: create_agent(store, data, system_clock))
        except DomainError as exc:
            print(f"error: {exc.detail}", file=sys.stderr)
            return 2
        print(f"Created agent {agent.id} ({agent.name}).")
        return 0
    if missing_data(settings):
        return 2
    from credence.access.agents import list_agents

    everyone = Principal(key_id="cli", scope="admin", agents=None, label="credence agents")

    async def every_agent(store):
        found, cursor = [], None
        while True:
            page = await list_agents(store, everyone, limit=500, cursor=cursor)
            found.extend(page.items)
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    listed = with_store(settings, every_agent)
    for agent in listed:
        roles = ",".join(agent.roles) or "-"
        state = "reflection on" if agent.reflection.enabled else "reflection off"
        print(f"{agent.id}  {agent.name}  roles {roles}  {state}")
    if not listed:
        print("no agents yet: `credence agents create ID --name NAME`")
    return 0
