"""`credence sync` and `credence import`: instruction files against a (remote) server."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from pathlib import Path

from credence.cli import command
from credence.integrations.managed_block import FORMATS, MarkerError, splice
from credence.integrations.remote import (
    ConfigError,
    Remote,
    RemoteError,
    agent_path,
    connection_from,
)

# Exit codes: 0 done (or up to date), 1 --check found the file out of date, 2 refused or failed.
OUT_OF_DATE = 1
REFUSED = 2


def server_flags(parser: argparse.ArgumentParser) -> None:
    """--url and --key, as `credence mcp` takes them."""
    parser.add_argument(
        "--url", help="the Credence server (default $CREDENCE_URL or http://127.0.0.1:8000)"
    )
    parser.add_argument(
        "--key",
        help="a Credence API key (default $CREDENCE_API_KEY, else ~/.config/credence/api-key)",
    )


def _sync_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", required=True, help="the agent whose kept beliefs to write")
    parser.add_argument("--file", required=True, type=Path, help="the instruction file")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="block style (default: claude-md for CLAUDE.md, agents-md for AGENTS.md, else"
        " markdown)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 and print the diff when the file is out of date",
    )
    server_flags(parser)


def format_for(path: Path) -> str:
    """The block style a file's name suggests."""
    name = path.name.lower()
    return {"claude.md": "claude-md", "agents.md": "agents-md"}.get(name, "markdown")


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename, keeping its permissions."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        else:
            os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _read_exactly(path: Path) -> str:
    """The file's text with its line endings as they are (CRLF stays CRLF)."""
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return REFUSED


@command("sync", "write an agent's kept beliefs into AGENTS.md / CLAUDE.md", _sync_flags)
def sync_command(args: argparse.Namespace) -> int:
    """Sync one instruction file's managed block with the agent's active beliefs."""
    fmt = args.format or format_for(args.file)
    # AGENTS.md is often a link to CLAUDE.md (one file for both agents): write through the link.
    path: Path = args.file.resolve() if args.file.is_symlink() else args.file
    try:
        old = _read_exactly(path) if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        return _fail(f"{path}: cannot read it as UTF-8 text ({exc})")
    try:
        remote = connection_from(args.url, args.key)
        block = remote.call(
            "GET", agent_path(args.agent, "/memory/export/block"), query={"format": fmt}
        ).decode("utf-8")
        new = splice(old, args.agent, block)
    except MarkerError as exc:
        return _fail(f"{path}: {exc}; fix the markers by hand, nothing was written")
    except (ConfigError, RemoteError) as exc:
        return _fail(str(exc))
    if new == old:
        print(f"{path} is up to date")
        return 0
    if args.check:
        sys.stdout.writelines(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"{path} (current)",
                tofile=f"{path} (synced)",
            )
        )
        print(f"{path} is out of date: run credence sync", file=sys.stderr)
        return OUT_OF_DATE
    try:
        write_atomically(path, new)
    except OSError as exc:
        return _fail(f"{path}: cannot write it ({exc})")
    beliefs = sum(1 for line in block.splitlines() if line.startswith("- "))
    print(f"updated {path} ({beliefs} kept beliefs of {args.agent})")
    return 0


def _import_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", required=True, help="the agent the rules are proposed for")
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="memory files")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the rules it would propose; propose nothing"
    )
    server_flags(parser)


@command("import", "propose the rules of existing memory files for review", _import_flags)
def import_command(args: argparse.Namespace) -> int:
    """Send each file to the server's import; every rule becomes a pending proposal."""
    try:
        remote = connection_from(args.url, args.key)
    except ConfigError as exc:
        return _fail(str(exc))
    failed = False
    for path in args.paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            failed = bool(_fail(f"{path}: cannot read it as UTF-8 text ({exc})"))
            continue
        try:
            result = _import_one(remote, args.agent, path, text, args.dry_run)
        except (ConfigError, RemoteError) as exc:
            failed = bool(_fail(f"{path}: {exc}"))
            continue
        _print_result(path, result)
    return REFUSED if failed else 0


def _import_one(remote: Remote, agent: str, path: Path, text: str, dry_run: bool) -> dict:
    return remote.json(
        "POST",
        agent_path(agent, "/memory/import"),
        body={"text": text, "filename": str(path), "dry_run": dry_run},
        timeout=600,
    )


def _print_result(path: Path, result: dict) -> None:
    rules = result["rules"]
    for rule in rules:
        where = f"{path}:{rule['line']}"
        if result["dry_run"]:
            print(f"would propose  {where}  {rule['text']}")
        elif rule["accepted"]:
            print(f"proposed  {where}  {rule['belief_id']}  {rule['text']}")
        else:
            print(f"not proposed ({rule['rejected_reason']})  {where}  {rule['text']}")
    for skipped in result["skipped"]:
        print(f"skipped  {path}:{skipped['line']}  {skipped['reason']}")
    accepted = sum(1 for r in rules if r["accepted"])
    verb = "would propose" if result["dry_run"] else f"{accepted} proposed for review of"
    managed = result["managed_lines"]
    note = f"; {managed} lines of Credence's managed block skipped" if managed else ""
    print(f"{path}: {verb} {len(rules)} rules{note}")


def _hooks_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", choices=("claude-code", "codex"), help="the coding agent")
    parser.add_argument(
        "--install",
        type=Path,
        metavar="PATH",
        help="merge the hooks into this Claude Code settings file (e.g. .claude/settings.json),"
        " keeping everything already there",
    )
    parser.add_argument(
        "--command",
        dest="hook_command",
        help="the hook command line (default: this Python running credence.integrations.hook)",
    )


@command(
    "hooks", "print (or install) the hook configuration for Claude Code or Codex", _hooks_flags
)
def hooks_command(args: argparse.Namespace) -> int:
    """Print the configuration, or merge it into a Claude Code settings file."""
    import json

    from credence.integrations.hook_config import (
        SettingsShapeError,
        claude_code_hooks,
        codex_notify,
        hook_command,
        merge_claude_code,
        render_settings,
    )

    hook = args.hook_command or hook_command(sys.executable, args.agent)
    if args.agent == "codex":
        if args.install:
            return _fail("--install is for Claude Code; add the line below to ~/.codex/config.toml")
        print(codex_notify(hook))
        return 0
    if args.install is None:
        print(render_settings(claude_code_hooks(hook)), end="")
        return 0
    path: Path = args.install
    try:
        old = _read_exactly(path) if path.exists() else ""
        current = json.loads(old) if old.strip() else {}
        if not isinstance(current, dict):
            raise SettingsShapeError("the file is not a JSON object")
        new = render_settings(merge_claude_code(current, hook))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return _fail(f"{path}: {exc}; nothing was written")
    if old and json.loads(new) == current:
        print(f"{path} already runs the Credence hooks")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, new)
    print(f"installed the Credence hooks in {path}")
    return 0


def _hook_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", choices=("claude-code", "codex"), help="the coding agent")
    parser.add_argument("payload", nargs="?", help="codex: the notification JSON")


@command("hook", "the hook program Claude Code and Codex run (see `credence hooks`)", _hook_flags)
def hook_program(args: argparse.Namespace) -> int:
    """Run the hook program (the same one `python -m credence.integrations.hook` runs)."""
    from credence.integrations.hook import main

    return main([args.agent, *([args.payload] if args.payload else [])])
