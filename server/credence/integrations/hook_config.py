"""Hook configuration for Claude Code (settings.json) and Codex CLI (config.toml), merged safely."""

from __future__ import annotations

import copy
import json
import shlex
from typing import Any

# Context for the task at hand on each prompt (and at start); finished turns on Stop and
# SessionEnd. The timeout is Claude Code's ceiling; the hook keeps its own, shorter budget.
CLAUDE_CODE_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
HOOK_TIMEOUT_SECONDS = 10


class SettingsShapeError(ValueError):
    """The settings file's ``hooks`` is not the shape Claude Code documents."""


def hook_command(python: str, agent: str) -> str:
    """The command line that runs the hook program for ``agent`` ("claude-code" or "codex")."""
    return f"{shlex.quote(python)} -m credence.integrations.hook {agent}"


def _entry(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}


def claude_code_hooks(command: str) -> dict[str, Any]:
    """The ``hooks`` section that runs ``command`` on every event Credence uses."""
    return {"hooks": {event: [{"hooks": [_entry(command)]}] for event in CLAUDE_CODE_EVENTS}}


def _is_credence(entry: Any) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(command, str) and (
        "credence.integrations.hook claude-code" in command
        or "credence hook claude-code" in command
    )


def merge_claude_code(settings: dict[str, Any], command: str) -> dict[str, Any]:
    """``settings`` with Credence's hooks added; everything already there is kept.

    A Credence hook already present for an event is updated in place (so a re-install changes
    nothing and a moved interpreter is followed); other hooks and settings are untouched.
    Raises SettingsShapeError when ``hooks`` or an event's list is not what Claude Code reads.
    """
    merged = copy.deepcopy(settings)
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsShapeError("`hooks` is not an object")
    for event in CLAUDE_CODE_EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SettingsShapeError(f"`hooks.{event}` is not a list")
        ours = [
            entry
            for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for entry in group["hooks"]
            if _is_credence(entry)
        ]
        if ours:
            for entry in ours:
                entry["command"] = command
            continue
        groups.append({"hooks": [_entry(command)]})
    return merged


def render_settings(settings: dict[str, Any]) -> str:
    """Settings as Claude Code writes them: two-space JSON and a final newline."""
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def codex_notify(command: str) -> str:
    """The config.toml line that makes Codex CLI run ``command`` after each turn."""
    return "notify = " + json.dumps(shlex.split(command))
