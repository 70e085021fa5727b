"""`credence reviewers`: list reviewers, assign or unassign them per agent."""

from __future__ import annotations

import argparse
import sys

from credence.cli import _data_flag, command, missing_data, settings_from, with_store


def _flags(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="reviewers_action", required=True)
    _data_flag(sub.add_parser("list", help="list reviewers and their devices"))
    for name, help_text in (
        ("assign", "make a reviewer one of an agent's reviewers"),
        ("unassign", "stop a reviewer reviewing an agent"),
    ):
        action = sub.add_parser(name, help=help_text)
        action.add_argument("agent_id")
        action.add_argument("reviewer_id")
        _data_flag(action)


@command("reviewers", "list reviewers; assign or unassign them per agent", _flags)
def reviewers(args: argparse.Namespace) -> int:
    """Manage reviewers directly in the store."""
    from credence.access import reviewers as access_reviewers
    from credence.clock import system_clock
    from credence.errors import DomainError

    settings = settings_from(args)
    if missing_data(settings):
        return 2
    if args.reviewers_action == "list":
        rows = with_store(
            settings, lambda store: store.read(access_reviewers.reviewers_with_devices)
        )
        for row in rows:
            devices = ", ".join(d["label"] or d["key_id"] for d in row["devices"]) or "no devices"
            print(f"{row['id']}  {row['name'] or '(no name)'}  {devices}")
        return 0
    assigned = args.reviewers_action == "assign"

    async def work(conn):
        await access_reviewers.assign(
            conn,
            agent_id=args.agent_id,
            reviewer_id=args.reviewer_id,
            assigned=assigned,
            clock=system_clock,
        )

    try:
        with_store(settings, lambda store: store.write(work))
    except DomainError as exc:
        print(f"error: {exc.detail}", file=sys.stderr)
        return 2
    verb = "now reviews" if assigned else "no longer reviews"
    print(f"{args.reviewer_id} {verb} {args.agent_id}")
    return 0
