"""Turns from real-shaped Claude Code transcripts and Codex notifications."""

from __future__ import annotations

import json
from pathlib import Path

from credence.integrations.transcript import MAX_MESSAGES, codex_turn, read_turns

FIXTURES = Path(__file__).parent / "fixtures"
TURN1 = (FIXTURES / "claude_code_turn1.jsonl").read_bytes()
TURN2 = (FIXTURES / "claude_code_turn2.jsonl").read_bytes()


def test_a_turn_keeps_prompt_answer_and_tool_calls_but_not_thinking() -> None:
    reading = read_turns(TURN1, "s1")
    (turn,) = reading.turns
    assert reading.consumed == len(TURN1) and reading.malformed == 0
    assert turn.messages[0] == {
        "role": "user",
        "content": "Add a --dry-run flag to the deploy script",
    }
    kinds = [(m["role"], [p["type"] for p in m["content"]]) for m in turn.messages[1:]]
    assert kinds == [
        ("assistant", ["tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
    ]
    assert "thinking" not in json.dumps(turn.messages)
    assert turn.finished_at == "2026-11-30T09:00:09.300Z" and turn.line == 3
    body = turn.body()
    assert body["session_id"] == "s1" and body["metadata"]["source"] == "claude-code"


def test_slash_commands_and_meta_lines_are_not_prompts() -> None:
    (turn,) = read_turns(TURN2, "s1", first_line=9).turns
    assert turn.messages[0]["content"].startswith("No, don't use rsync -n")
    assert turn.line == 11 and len(turn.messages) == 2


def test_a_partial_last_line_waits_and_malformed_lines_are_counted() -> None:
    cut = TURN1 + TURN2[:40]
    reading = read_turns(b"not json\n[1, 2]\n" + cut, "s1")
    assert reading.malformed == 2 and len(reading.turns) == 1
    assert reading.consumed == len(b"not json\n[1, 2]\n") + len(TURN1)


def test_lines_before_the_first_prompt_belong_to_an_earlier_turn() -> None:
    tail = b"\n".join(TURN1.splitlines()[3:]) + b"\n"
    assert read_turns(tail, "s1").turns == []


def test_a_very_long_turn_keeps_its_prompt_and_latest_messages() -> None:
    prompt = {"type": "user", "uuid": "p", "message": {"role": "user", "content": "go"}}
    answer = {"type": "assistant", "message": {"role": "assistant", "content": "step"}}
    lines = [json.dumps(prompt)] + [json.dumps(answer)] * (MAX_MESSAGES + 50)
    (turn,) = read_turns(("\n".join(lines) + "\n").encode(), "s1").turns
    assert len(turn.messages) == MAX_MESSAGES and turn.messages[0]["content"] == "go"


def test_codex_notification_becomes_a_turn() -> None:
    payload = json.loads((FIXTURES / "codex_notify.json").read_text())
    turn = codex_turn(payload)
    assert turn is not None and turn.key == "12" and turn.source == "codex"
    assert turn.messages == [
        {"role": "user", "content": "Rename the cart module to basket"},
        {"role": "assistant", "content": "Renamed cart/ to basket/ and updated 14 imports."},
    ]
    assert codex_turn({"type": "approval-requested"}) is None
    assert codex_turn({**payload, "input-messages": []}) is None
