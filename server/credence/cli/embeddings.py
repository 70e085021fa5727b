"""The `credence embeddings` command: the stored embeddings' model, and the backfill on demand."""

from __future__ import annotations

import argparse

from credence.cli import command, missing_data, settings_from


def _flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="data dir (default $CREDENCE_DATA_DIR or ./data)")
    parser.add_argument("--database-url", help="postgresql://… URL of a shared database")
    parser.add_argument(
        "--run",
        action="store_true",
        help="re-embed every stale row now, in the foreground (servers also do it on start)",
    )


@command(
    "embeddings", "how many stored rows the configured model embedded; --run backfills", _flags
)
def embeddings(args: argparse.Namespace) -> int:
    """Print one status line; with --run, first re-embed what another model made."""
    import asyncio

    from credence.services import open_services

    settings = settings_from(args)
    if missing_data(settings):
        return 2

    async def run() -> str:
        from credence.memory.semantics.backfill import Backfill, status

        async with open_services(settings) as services:
            backfill = Backfill(services.store, services.embedder, services.clock)
            if args.run:
                await backfill.run()
                return (
                    await status(services.store, backfill.embedder.name, backfill.progress)
                ).line
            return (await status(services.store, services.embedder.name)).line

    print(asyncio.run(run()))
    return 0
