"""The `credence reflect` and `credence seed` commands (registered in credence.cli)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import msgspec

from credence.models import Job, JobIn
from credence.settings import Settings

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 3


def reflect_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `credence reflect`."""
    parser.add_argument("agent_id", help="the agent to reflect on")
    parser.add_argument("--reflector", choices=("llm", "heuristic", "stub"))
    parser.add_argument(
        "--stub-output",
        type=Path,
        help="file holding the raw model text the stub reflector returns ('-' for stdin)",
    )
    parser.add_argument("--now", help="pin the job's clock, RFC 3339 (e.g. 2026-12-01T03:00:00Z)")
    parser.add_argument("--since", help="only episodes finished at or after this RFC 3339 time")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait (900)")
    parser.add_argument("--json", action="store_true", help="print the whole job as JSON")


def seed_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `credence seed`."""
    parser.add_argument("manifest", type=Path, help="JSON manifest (see examples/reflection.json)")
    parser.add_argument(
        "--replace",
        action="store_true",
        help="make existing wakes' agent lists match the manifest (default: merge them)",
    )


def summary(job: Job) -> list[str]:
    """Human-readable lines describing a finished job."""
    lines = [f"job {job.id} {job.status} (agent {job.agent_id}, trigger {job.trigger})"]
    for step in job.steps:
        took = f"{step.duration_ms:9.1f} ms" if step.duration_ms is not None else " " * 12
        error = f"  {step.error}" if step.error else ""
        lines.append(f"  {step.name:8} {step.status:10}{took}{error}")
    out = job.output_data
    if out is None:
        if job.error:
            lines.append(f"error: {job.error}")
        return lines
    lines.append(
        f"reflector {out.reflector}: {out.episodes_considered} episodes considered,"
        f" {out.proposed} proposed, {sum(r.accepted for r in out.results)} submitted for review"
    )
    for result in out.results:
        verdict = "accepted" if result.accepted else f"rejected {result.rejected_reason}"
        reasons = f" ({', '.join(result.reasons)})" if result.reasons else ""
        lines.append(f"  #{result.index} [{result.gate}] {verdict}: {result.belief}{reasons}")
    for dropped in out.dropped:
        lines.append(f"  #{dropped.index} dropped: {dropped.reason}")
    for item in out.decayed:
        lines.append(
            f"  decayed {item.belief_id}: {item.confidence:.2f} -> {item.decayed_confidence:.2f}"
            f" after {item.age_days:.1f} days"
        )
    if out.partial is not None:
        lines.append(f"partial: {out.partial.detail}")
    return lines


def _input(args: argparse.Namespace) -> dict[str, Any]:
    data: dict[str, Any] = {"agent_id": args.agent_id}
    if args.reflector:
        data["reflector"] = args.reflector
    if args.stub_output is not None:
        source = sys.stdin if str(args.stub_output) == "-" else None
        data["stub_output"] = (
            source.read() if source else args.stub_output.read_text(encoding="utf-8")
        )
    for name in ("now", "since"):
        if getattr(args, name):
            data[name] = getattr(args, name)
    return {"workflow_id": "agent-reflection", "input_data": data}


async def _reflect(settings: Settings, args: argparse.Namespace) -> tuple[int, Job | None]:
    from credence.app import create_app
    from credence.clock import rfc3339
    from credence.db import jobs as db_jobs
    from credence.memory.ingest.redact import REDACTION_SECRET
    from credence.reflection import jobs
    from credence.reflection.engine import runner_of

    try:
        request = msgspec.convert(_input(args), JobIn, strict=False)
    except (msgspec.ValidationError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE, None
    app = create_app(settings)
    async with app.lifespan():
        services = app.state.services
        agent_id = args.agent_id
        if not await services.store.read(lambda conn: db_jobs.agent_exists(conn, agent_id)):
            print(f"error: no agent {args.agent_id!r}", file=sys.stderr)
            return EXIT_USAGE, None
        try:
            key = services.store.secret(REDACTION_SECRET)
            stored = jobs.manual_input(request, bool(settings.llm_url), key)
        except jobs.JobInputRejected as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE, None
        job = await jobs.submit(
            services.store,
            agent_id=args.agent_id,
            trigger="manual",
            input_data=stored,
            now=rfc3339(services.clock()),
            submitted_by="cli",
        )
        runner = runner_of(services)
        assert runner is not None, "the reflection component is not running"
        runner.wake()
        finished = await runner.wait(job.id, args.timeout)
    if finished is None or finished.status not in jobs.TERMINAL:
        print(f"error: job {job.id} did not finish within {args.timeout:g} s", file=sys.stderr)
        return EXIT_TIMEOUT, finished
    return (0 if finished.status == "succeeded" else EXIT_FAILED), finished


def reflect_command(settings: Settings, args: argparse.Namespace) -> int:
    """Run one reflection job in this process (no HTTP) and print what it did."""
    # Only this job: the CLI never fires cron windows on its own.
    # The in-process server's start-up lines (migrations, VAPID, MCP) are not this command's
    # result: only warnings and errors reach stderr while it runs.
    settings = msgspec.structs.replace(settings, scheduler=False, log_level="WARNING")
    logging.getLogger().setLevel(logging.WARNING)
    code, job = asyncio.run(_reflect(settings, args))
    if job is not None:
        if args.json:
            print(msgspec.json.format(msgspec.json.encode(job)).decode())
        else:
            print("\n".join(summary(job)))
    return code


def seed_command(settings: Settings, args: argparse.Namespace) -> int:
    """Apply a manifest to the data dir and print what changed."""
    from credence.clock import system_clock
    from credence.db import make_store
    from credence.reflection.seed import ManifestError, apply_manifest, load_manifest

    try:
        manifest = load_manifest(args.manifest)
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    async def run() -> list[str]:
        store = make_store(settings.database_url, settings.database_path)
        await store.open()
        try:
            return await apply_manifest(store, manifest, system_clock, replace=args.replace)
        finally:
            await store.close()

    try:
        lines = asyncio.run(run())
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(lines) if lines else "nothing to seed")
    return 0
