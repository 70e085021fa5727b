"""Hook configuration: printed for Claude Code and Codex, merged without losing anything."""

from __future__ import annotations

import pytest

from credence.integrations.hook_config import (
    CLAUDE_CODE_EVENTS,
    SettingsShapeError,
    claude_code_hooks,
    codex_notify,
    hook_command,
    merge_claude_code,
)

COMMAND = hook_command("/opt/my venv/bin/python", "claude-code")


def test_the_command_quotes_the_interpreter() -> None:
    assert COMMAND == "'/opt/my venv/bin/python' -m credence.integrations.hook claude-code"
    assert codex_notify(hook_command("/usr/bin/python3", "codex")) == (
        'notify = ["/usr/bin/python3", "-m", "credence.integrations.hook", "codex"]'
    )


def test_every_event_runs_the_hook() -> None:
    hooks = claude_code_hooks(COMMAND)["hooks"]
    assert set(hooks) == set(CLAUDE_CODE_EVENTS)
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"] == COMMAND


def test_merge_keeps_other_hooks_and_settings_and_is_idempotent() -> None:
    mine = {"type": "command", "command": "notify-send done"}
    existing = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [mine]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
        },
    }
    merged = merge_claude_code(existing, COMMAND)
    assert (
        merged["model"] == "opus"
        and merged["hooks"]["PreToolUse"] == existing["hooks"]["PreToolUse"]
    )
    assert merged["hooks"]["Stop"][0] == {"hooks": [mine]}
    assert merged["hooks"]["Stop"][1]["hooks"][0]["command"] == COMMAND
    assert merge_claude_code(merged, COMMAND) == merged
    moved = merge_claude_code(merged, "credence hook claude-code")
    assert sum(len(g["hooks"]) for g in moved["hooks"]["Stop"]) == 2
    assert moved["hooks"]["Stop"][1]["hooks"][0]["command"] == "credence hook claude-code"
    assert existing["hooks"]["Stop"] == [{"hooks": [mine]}]  # the input is not changed


@pytest.mark.parametrize("settings", [{"hooks": []}, {"hooks": {"Stop": {}}}])
def test_a_settings_file_of_another_shape_is_refused(settings: dict) -> None:
    with pytest.raises(SettingsShapeError):
        merge_claude_code(settings, COMMAND)
