"""The hook program coding agents run: context on each prompt, finished turns posted once.

Claude Code: ``python -m credence.integrations.hook claude-code`` with the event's JSON on stdin.
Codex CLI: ``python -m credence.integrations.hook codex '<json>'`` as its ``notify`` program.
It never blocks the agent: every failure is one line on stderr and exit status 0. Its imports
are the standard library's, so it starts in tens of milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from credence.integrations.remote import (
    ConfigError,
    Remote,
    RemoteError,
    agent_path,
    connection_from,
    only_agent,
)

if TYPE_CHECKING:
    from credence.integrations.spool import State
    from credence.integrations.transcript import Turn

# The prompt path imports only what it uses: the spool and the transcript reader load on the
# turn path (and the spool on the prompt path only when the agent id must be looked up).

DEFAULT_BUDGET = 1.5
DEFAULT_POST_BUDGET = 3.0
MAX_QUERY = 1000
# Statuses worth retrying later; any other refusal (422: not a turn) is dropped with a note.
RETRY_STATUSES = frozenset({0, 408, 425, 429, 500, 502, 503, 504})
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart"})
TURN_EVENTS = frozenset({"Stop", "SessionEnd"})


class _OutOfTime(Exception):
    pass


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    try:
        value = float(environ.get(name, default))
    except ValueError:
        return default
    return value if 0 < value <= 60 else default


def _note(message: str) -> None:
    print(f"credence hook: {message}", file=sys.stderr)


def _state(environ: Mapping[str, str]) -> State:
    from credence.integrations.spool import State, state_dir

    return State(state_dir(environ))


def _agent(remote: Remote, state: State | None, environ: Mapping[str, str], timeout: float) -> str:
    chosen = environ.get("CREDENCE_AGENT_ID")
    if chosen:
        return chosen
    state = state or _state(environ)
    cached = state.cached_agent(remote.url, remote.key)
    if cached:
        return cached
    agent = only_agent(Remote(remote.url, remote.key, timeout))
    state.cache_agent(remote.url, remote.key, agent)
    return agent


def _alarm(_signum: int, _frame: Any) -> None:
    raise _OutOfTime


def context_answer(event: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The hook output carrying the memory block for this prompt, or None (nothing to add).

    The whole call, from reading settings to the answer, fits in CREDENCE_HOOK_BUDGET seconds
    (default 1.5): past it the hook gives up and the prompt goes on without memory.
    """
    budget = _seconds(environ, "CREDENCE_HOOK_BUDGET", DEFAULT_BUDGET)
    deadline = time.monotonic() + budget
    timer = hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")
    if timer:
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        remote = connection_from(None, None, environ)
        agent = _agent(remote, None, environ, max(0.05, deadline - time.monotonic()))
        query: dict[str, str] = {}
        prompt = event.get("prompt")
        if isinstance(prompt, str) and prompt.strip():
            query["query"] = prompt.replace("\x00", "")[:MAX_QUERY]
        context = Remote(remote.url, remote.key, max(0.05, deadline - time.monotonic())).json(
            "GET", agent_path(agent, "/memory/context"), query=query
        )
    except _OutOfTime:
        _note(f"no memory: the server did not answer within {budget:g} s")
        return None
    except (ConfigError, RemoteError, OSError, ValueError) as exc:
        _note(f"no memory: {exc}")
        return None
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
    if not context.get("memory_notes") and not context.get("recent_relevant_episodes"):
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": event.get("hook_event_name"),
            "additionalContext": context["prompt_block"],
        }
    }


def flush(
    state: State, remote: Remote, environ: Mapping[str, str], deadline: float
) -> tuple[int, int]:
    """Post queued turns oldest first until one cannot be delivered; (posted, left waiting)."""
    posted = 0
    waiting = state.spooled()
    for path in waiting:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        item = state.load(path)
        if item is None:
            path.unlink(missing_ok=True)
            continue
        agent, body = item
        try:
            agent = agent or _agent(remote, state, environ, remaining)
            status, data = Remote(remote.url, remote.key, remaining).request(
                "POST", agent_path(agent, "/turns"), body=body
            )
        except (RemoteError, ConfigError) as exc:
            _note(f"{len(waiting) - posted} turns kept for later: {exc}")
            break
        if status in RETRY_STATUSES:
            _note(f"{len(waiting) - posted} turns kept for later: HTTP {status}")
            break
        if not 200 <= status < 300:
            _note(f"a turn was refused (HTTP {status}) and dropped: {data[:200]!r}")
        path.unlink(missing_ok=True)
        posted += 1
    return posted, len(state.spooled())


def _agent_known(remote: Remote, state: State, environ: Mapping[str, str]) -> str:
    """The agent id without asking the server ("" when only the server can say)."""
    return environ.get("CREDENCE_AGENT_ID") or state.cached_agent(remote.url, remote.key) or ""


def _new_turns(state: State, event: Mapping[str, Any]) -> tuple[list[Turn], Any]:
    """The transcript's turns past the saved position, and a function that moves the position.

    The caller queues the turns first and then moves the position: a crash in between reads
    the turns again rather than losing them.
    """
    session = str(event.get("session_id") or "")
    transcript = event.get("transcript_path")
    if not session or not isinstance(transcript, str) or not transcript:
        return [], lambda: None
    from pathlib import Path

    path = Path(transcript)
    try:
        size = path.stat().st_size
    except OSError as exc:
        _note(f"cannot read the transcript: {exc}")
        return [], lambda: None
    offset = state.position(session, transcript)
    lines = state.lines_read(session)
    if offset > size:  # the file was replaced or cut: read it again from the start
        offset, lines = 0, 0
    with path.open("rb") as handle:
        handle.seek(offset)
        chunk = handle.read(size - offset)
    from credence.integrations.transcript import read_turns

    reading = read_turns(chunk, session, first_line=lines + 1)
    if reading.malformed:
        _note(f"skipped {reading.malformed} malformed transcript lines")
    read_lines = lines + chunk[: reading.consumed].count(b"\n")
    end = offset + reading.consumed
    return reading.turns, lambda: state.save_position(session, transcript, end, read_lines)


def post_turns(event: Mapping[str, Any], environ: Mapping[str, str], turns: list[Turn]) -> None:
    """Queue the new turns and deliver what waits, oldest first, within the time budget."""
    budget = _seconds(environ, "CREDENCE_HOOK_POST_BUDGET", DEFAULT_POST_BUDGET)
    deadline = time.monotonic() + budget
    remote = connection_from(None, None, environ)
    state = _state(environ)
    with state.locked():
        fresh, move_position = (turns, lambda: None) if turns else _new_turns(state, event)
        agent = _agent_known(remote, state, environ)
        for turn in fresh:
            state.spool(agent, turn.body())
        move_position()
        flush(state, remote, environ, deadline)


def claude_code(stdin: TextIO, stdout: TextIO, environ: Mapping[str, str]) -> int:
    """Handle one Claude Code hook event; always exit status 0."""
    try:
        event = json.loads(stdin.read() or "{}")
    except ValueError:
        _note("the event on stdin is not JSON")
        return 0
    if not isinstance(event, dict):
        return 0
    name = event.get("hook_event_name")
    if name in CONTEXT_EVENTS:
        answer = context_answer(event, environ)
        if answer is not None:
            stdout.write(json.dumps(answer))
            stdout.flush()
    elif name in TURN_EVENTS:
        _quietly(lambda: post_turns(event, environ, []))
    return 0


def codex(argv: list[str], environ: Mapping[str, str]) -> int:
    """Handle Codex CLI's notification (its JSON is the last argument); always exit 0."""
    try:
        payload = json.loads(argv[-1]) if argv else None
    except ValueError:
        _note("the notification argument is not JSON")
        return 0
    from credence.integrations.transcript import codex_turn

    turn = codex_turn(payload)
    if turn is None:
        return 0

    def post() -> None:
        state = _state(environ)
        with state.locked():
            if state.seen(f"codex:{turn.key}"):
                return
            state.remember(f"codex:{turn.key}")
        post_turns({}, environ, [turn])

    _quietly(post)
    return 0


def _quietly(work: Any) -> None:
    try:
        work()
    except (ConfigError, RemoteError, OSError, ValueError) as exc:
        _note(str(exc))


def main(argv: list[str] | None = None) -> int:
    """``claude-code`` (event on stdin) or ``codex JSON``; exit 0 whatever happens."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in ("claude-code", "codex"):
        print("usage: credence hook {claude-code|codex} [JSON]", file=sys.stderr)
        return 2
    try:
        if args[0] == "claude-code":
            return claude_code(sys.stdin, sys.stdout, os.environ)
        return codex(args[1:], os.environ)
    except Exception as exc:
        _note(f"unexpected {type(exc).__name__}: {exc}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
