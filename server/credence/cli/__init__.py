"""The `credence` command: serve, keys, pair, openapi, audit and the other entry points."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from credence.errors import StoreError
from credence.logs import quiet_noisy_loggers, safe_handler
from credence.settings import (
    Settings,
    SettingsError,
    check_listen,
    load_settings,
)

Command = Callable[[argparse.Namespace], int]
# How the command line appears as the actor of a key's write grant.
CLI_ACTOR = "cli"
_COMMANDS: dict[str, tuple[Command, Callable[[argparse.ArgumentParser], None], str]] = {}


def command(name: str, help_text: str, arguments: Callable[[argparse.ArgumentParser], None]):
    """Register a subcommand: ``arguments`` adds its flags, the function runs it."""

    def register(func: Command) -> Command:
        _COMMANDS[name] = (func, arguments, help_text)
        return func

    return register


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the environment, overridden by the common flags."""
    return load_settings(
        data_dir=getattr(args, "data", None),
        database_url=getattr(args, "database_url", None),
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
    )


def missing_data(settings: Settings) -> bool:
    """True, after saying why on stderr, when the data dir holds no Credence database yet.

    Commands that only make sense on a server's existing data check this first, so a mistyped
    --data is reported instead of silently creating an empty data dir.
    """
    if settings.database_url or settings.database_path.is_file():
        return False
    print(
        f"error: no Credence data in {settings.data_dir} ({settings.database_path.name} is"
        " missing). Pass --data (or set CREDENCE_DATA_DIR) to the directory your server uses;"
        " `make demo` keeps its data in ./demo-data.",
        file=sys.stderr,
    )
    return True


def with_store(settings: Settings, work: Callable[[Any], Awaitable[Any]]) -> Any:
    """Open the store of ``settings``, run ``work(store)``, close it, return the result."""
    from credence.db import make_store

    async def run() -> Any:
        store = make_store(settings.database_url, settings.database_path)
        await store.open()
        try:
            return await work(store)
        finally:
            await store.close()

    return asyncio.run(run())


def _data_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, help="data dir (default $CREDENCE_DATA_DIR or ./data)")
    parser.add_argument(
        "--database-url",
        help="postgresql://… URL of a shared database (default $CREDENCE_DATABASE_URL;"
        " unset: the SQLite file in the data dir)",
    )


def _serve_flags(parser: argparse.ArgumentParser) -> None:
    _data_flag(parser)
    parser.add_argument("--host", help="bind address (default $CREDENCE_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default $CREDENCE_PORT or 8000)")


@command("serve", "run the HTTP service", _serve_flags)
def serve(args: argparse.Namespace) -> int:
    """Run the service with uvicorn until interrupted; "listening" only once it is serving."""
    import uvicorn

    from credence.files import restrict_umask
    from credence.serving import check_startup, uvicorn_config

    restrict_umask()
    settings = settings_from(args)
    check_listen(settings)
    check_startup(settings)
    # The app (Litestar, the model runtime, MCP) is imported only once the settings check out,
    # so a bad setting is reported in a fraction of a second, not after seconds of imports.
    from credence.app import create_app

    app = create_app(settings)

    class AnnouncedServer(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and not self.should_exit:
                print(f"Credence listening on {settings.base_url}", flush=True)

    server = AnnouncedServer(uvicorn_config(app, settings))
    server.run()
    return 0 if server.started else 1


def _keys_flags(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="keys_action", required=True)
    create = sub.add_parser("create", help="create a key and print it (alone on the last line)")
    create.add_argument("--scope", choices=("admin", "reviewer", "agent"), required=True)
    create.add_argument(
        "--agent",
        action="append",
        dest="agents",
        help="agent id (repeatable); a reviewer key without --agent covers every agent",
    )
    create.add_argument("--label", default="")
    create.add_argument(
        "--may-write",
        action="store_true",
        help="a reviewer key that may also post episodes, turns, proposals and imports",
    )
    _data_flag(create)
    revoke = sub.add_parser("revoke", help="revoke a key by id")
    revoke.add_argument("key_id")
    _data_flag(revoke)
    for action, words in (("grant-write", "grant"), ("withdraw-write", "withdraw")):
        grant = sub.add_parser(
            action,
            help=f"{words} a reviewer key's posting of episodes, turns, proposals and imports",
        )
        grant.add_argument("key_id")
        _data_flag(grant)
    listing = sub.add_parser("list", help="list keys (never their secrets)")
    _data_flag(listing)


@command("keys", "create, list, revoke API keys or grant a reviewer key writing", _keys_flags)
def keys(args: argparse.Namespace) -> int:
    """Manage API keys directly in the store (the data dir's SQLite file or --database-url)."""
    from credence.access.keys import create_key, list_keys, revoke_key, set_may_write
    from credence.clock import system_clock
    from credence.errors import DomainError

    settings = settings_from(args)
    if args.keys_action == "create":

        async def create(store):
            async def work(conn):
                return await create_key(
                    conn,
                    scope=args.scope,
                    agents=args.agents,
                    label=args.label,
                    clock=system_clock,
                    may_write=args.may_write,
                    granted_by=CLI_ACTOR,
                )

            return await store.write(work)

        try:
            secret, row = with_store(settings, create)
        except DomainError as exc:
            print(f"error: {exc.detail}", file=sys.stderr)
            return 2
        agents = ",".join(row["agents"]) if row["agents"] else "all agents"
        print(f"Created {row['scope']} key {row['id']} ({agents}). It is shown only once:")
        print(secret)
        return 0
    if missing_data(settings):
        return 2
    if args.keys_action == "revoke":
        try:
            with_store(settings, lambda store: revoke_key(store, args.key_id, system_clock))
        except DomainError:
            print(f"error: no key {args.key_id}", file=sys.stderr)
            return 2
        print(f"Revoked {args.key_id}")
        return 0
    if args.keys_action in ("grant-write", "withdraw-write"):
        granted = args.keys_action == "grant-write"
        try:
            with_store(
                settings,
                lambda store: set_may_write(
                    store, args.key_id, granted, by=CLI_ACTOR, clock=system_clock
                ),
            )
        except DomainError as exc:
            print(f"error: {exc.detail}", file=sys.stderr)
            return 2
        print(f"{'Granted' if granted else 'Withdrew'} may_write for {args.key_id}")
        return 0

    for info in with_store(settings, list_keys):
        state = f"revoked {info['revoked_at']}" if info["revoked_at"] else "active"
        if info["scope"] == "reviewer" and info["may_write"]:
            state += ", may write"
        print(
            f"{info['id']}  {info['scope']:8}  {info['agents'] or 'all'}  {state}  {info['label']}"
        )
    return 0


def _pair_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent",
        action="append",
        dest="agents",
        help="only this agent (repeatable); without --agent the key covers every agent",
    )
    parser.add_argument("--label", default="paired device", help="a name for the device's key")
    _data_flag(parser)


@command("pair", "pair a phone: print a one-time pairing QR code and URL", _pair_flags)
def pair(args: argparse.Namespace) -> int:
    """Create a one-time pairing code (10 minutes); print its QR code, then the URL alone last."""
    from credence.access.pairing import create_pairing_code
    from credence.clock import system_clock
    from credence.errors import DomainError

    settings = settings_from(args)
    if missing_data(settings):
        return 2

    async def create(store):
        async def work(conn):
            return await create_pairing_code(
                conn, agents=args.agents, label=args.label, clock=system_clock
            )

        return await store.write(work)

    try:
        code, expires_at = with_store(settings, create)
    except DomainError as exc:
        print(f"error: {exc.detail}", file=sys.stderr)
        return 2
    print_pairing(settings, code, expires_at, args.agents)
    return 0


def print_pairing(
    settings: Settings, code: str, expires_at: str, agents: list[str] | None = None
) -> None:
    """Print a pairing code's QR code, then its URL alone on the last line."""
    import io

    import segno

    url = f"{settings.base_url}/?pair={code}"
    qr = io.StringIO()
    segno.make(url, error="m").terminal(out=qr, compact=True, border=2)
    scope = ", ".join(agents) if agents else "all agents"
    print("Scan this with the phone's camera, or open the link below on the device to pair.")
    print(qr.getvalue(), end="")
    print(f"One use, for a reviewer key on {scope}; it expires at {expires_at}.")
    print(url, flush=True)


def _openapi_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, default=Path("openapi.yaml"))


@command("openapi", "write the OpenAPI document the app serves", _openapi_flags)
def openapi(args: argparse.Namespace) -> int:
    """Regenerate openapi.yaml from the app's routes and types."""
    from credence.app import openapi_document
    from credence.openapi_doc import render_openapi

    args.output.write_text(render_openapi(openapi_document()), encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


def _audit_flags(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="audit_action", required=True)
    verify = sub.add_parser("verify", help="verify the audit hash chain")
    _data_flag(verify)


@command("audit", "verify the audit chain", _audit_flags)
def audit_command(args: argparse.Namespace) -> int:
    """Print {ok, rows, first_broken} for the audit chain; exit 1 when it is broken."""
    import json

    from credence.memory.lifecycle import audit

    ok, rows, first_broken = with_store(settings_from(args), audit.verify)
    print(json.dumps({"ok": ok, "rows": rows, "first_broken": first_broken}))
    return 0 if ok else 1


def _reflect_flags(parser: argparse.ArgumentParser) -> None:
    from credence.cli.reflect import reflect_arguments

    reflect_arguments(parser)
    _data_flag(parser)


@command("reflect", "run one reflection job for an agent and print its summary", _reflect_flags)
def reflect(args: argparse.Namespace) -> int:
    """Run one agent-reflection job in-process; exit 0 when it succeeded."""
    from credence.cli.reflect import reflect_command

    return reflect_command(settings_from(args), args)


def _seed_flags(parser: argparse.ArgumentParser) -> None:
    from credence.cli.reflect import seed_arguments

    seed_arguments(parser)
    _data_flag(parser)


@command("seed", "create or update agents and wakes from a JSON manifest", _seed_flags)
def seed(args: argparse.Namespace) -> int:
    """Apply an annotated manifest idempotently (see examples/reflection.json)."""
    from credence.cli.reflect import seed_command

    return seed_command(settings_from(args), args)


def _push_flags(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="push_action", required=True)
    test = sub.add_parser("test", help="send a test notification to devices and channels")
    test.add_argument("--key", dest="key_id", help="only the devices of this key id")
    _data_flag(test)


@command("push", "web push and notification channel tools", _push_flags)
def push_command(args: argparse.Namespace) -> int:
    """Send a test push now to every subscribed device (or one key's) and every channel."""
    from credence.clock import system_clock
    from credence.notify.channels import mask_channel_url
    from credence.notify.endpoints import policy_from, push_client
    from credence.notify.outbox import sync_env_channels
    from credence.notify.runtime import check_settings, load_runtime
    from credence.notify.testsend import send_test

    settings = settings_from(args)
    if missing_data(settings):
        return 2
    check_settings(settings)
    try:
        policy = policy_from(settings)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None

    async def run(store):
        runtime = await load_runtime(settings, store)
        await sync_env_channels(store, settings.apprise_urls, mask_channel_url, system_clock())
        async with push_client(policy) as http:
            return await send_test(
                store, http, runtime, system_clock, key_id=args.key_id, agents=None
            )

    _, devices, channels = with_store(settings, run)
    for device in devices:
        status = f"HTTP {device.status_code}" if device.status_code else "no answer"
        print(f"device {device.subscription_id}: {device.outcome} ({status}) {device.detail}")
    for channel in channels:
        print(f"channel {channel.url}: {'delivered' if channel.ok else 'failed'} {channel.detail}")
    if not devices and not channels:
        print("nothing to notify: open Credence on a device and allow notifications")
        return 1
    ok = all(d.outcome == "sent" for d in devices) and all(c.ok for c in channels)
    return 0 if ok else 1


def _mcp_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", help="the Credence server (default $CREDENCE_URL or http://127.0.0.1:8000)"
    )
    parser.add_argument("--key", help="a Credence API key (default $CREDENCE_API_KEY)")


@command("mcp", "serve MCP over stdio, relaying to a Credence server's /mcp", _mcp_flags)
def mcp_command(args: argparse.Namespace) -> int:
    """Bridge a stdio MCP client (a desktop app, an IDE) to a running server and one key."""
    import os

    from credence.mcp_bridge import DEFAULT_URL, main

    key = args.key or os.environ.get("CREDENCE_API_KEY", "")
    if not key:
        print("error: give --key or set CREDENCE_API_KEY", file=sys.stderr)
        return 2
    return main(args.url or os.environ.get("CREDENCE_URL") or DEFAULT_URL, key)


def _demo_flags(parser: argparse.ArgumentParser) -> None:
    _serve_flags(parser)
    parser.add_argument("--manifest", type=Path, help="demo manifest (default examples/demo.json)")


@command("demo", "load the demo data, reflect once and serve it with a pairing link", _demo_flags)
def demo(args: argparse.Namespace) -> int:
    """Prepare the demo data dir (idempotently), print where to open it, then serve."""
    import os

    import uvicorn

    from credence.app import create_app
    from credence.cli.demo import DEMO_MANIFEST, prepare
    from credence.files import restrict_umask
    from credence.serving import check_startup, uvicorn_config

    restrict_umask()
    if args.data is None and not os.environ.get("CREDENCE_DATA_DIR"):
        args.data = Path("./demo-data")
    settings = settings_from(args)
    check_listen(settings)
    check_startup(settings)
    print(f"Preparing the demo in {settings.data_dir} …", flush=True)
    report = asyncio.run(prepare(settings, args.manifest or DEMO_MANIFEST))
    print(
        f"Loaded {report.new_episodes} new episodes and {report.new_beliefs} reviewed beliefs"
        f" for {', '.join(report.agents)}."
    )
    for line in report.jobs:
        print(f"  reflection {line}")
    print(f"\n{report.pending} beliefs are waiting for your review.")
    print(f"Open {settings.base_url}/ — or pair your phone:\n")
    print_pairing(settings, report.pairing_code, report.pairing_expires_at)
    print("\nPress Ctrl-C to stop; the next `make demo` resumes with the same data.", flush=True)
    uvicorn.Server(uvicorn_config(create_app(settings), settings, log_level="warning")).run()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `credence` console script."""
    from credence import __version__

    parser = argparse.ArgumentParser(prog="credence", description=__doc__)
    parser.add_argument("--version", action="version", version=f"credence {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, arguments, help_text) in _COMMANDS.items():
        arguments(sub.add_parser(name, help=help_text))
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, handlers=[safe_handler(os.environ.get("CREDENCE_LOG_FORMAT", "text"))]
    )
    quiet_noisy_loggers()
    # httpx logs every request at INFO, push endpoint URLs included: keep it to warnings.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        return _COMMANDS[args.command][0](args)
    except (SettingsError, StoreError) as exc:
        # A database that cannot be opened is a setting to fix: one line, no traceback.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


from credence.cli import agents as _agents  # noqa: E402, F401  (registers `agents`)
from credence.cli import db as _db  # noqa: E402, F401  (registers `migrate` and `db`)
from credence.cli import embeddings as _embeddings  # noqa: E402, F401  (registers `embeddings`)
from credence.cli import integrations as _integrations  # noqa: E402, F401  (sync, import, hooks)
from credence.cli import reviewers as _reviewers  # noqa: E402, F401  (registers `reviewers`)
