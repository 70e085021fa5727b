"""Memory files read as rules, each with the line it starts on."""

from __future__ import annotations

import json

import pytest

from credence.integrations.managed_block import BlockBelief, render_block
from credence.integrations.memory_files import MemoryFileError, parse_memory_file

CLAUDE_MD = """\
# CLAUDE.md

This file guides Claude Code in this repository.

## Commands

```sh
make test   # not a rule: code
```

## Rules

- Use `uv` for Python packages, never pip.
- Run the linter before committing;
  it catches what review misses.
1. Keep functions short.
* [ ] Write a test first.
<!-- a note to self,
     over two lines -->
@docs/style.md

| a | table |
"""


def test_claude_md_rules_come_with_their_lines() -> None:
    parsed = parse_memory_file(CLAUDE_MD)
    found = [(r.line, r.text) for r in parsed.rules]
    assert found == [
        (3, "This file guides Claude Code in this repository."),
        (13, "Use `uv` for Python packages, never pip."),
        (14, "Run the linter before committing; it catches what review misses."),
        (16, "Keep functions short."),
        (17, "Write a test first."),
    ]
    assert parsed.kind == "markdown" and parsed.managed_lines == 0


def test_lines_inside_credence_blocks_are_skipped() -> None:
    block = render_block("coder", [BlockBelief("Kept already")])
    parsed = parse_memory_file(f"- mine\n\n{block}- after\n")
    assert [r.text for r in parsed.rules] == ["mine", "after"]
    assert parsed.managed_lines == len(block.splitlines())
    assert parsed.rules[1].line == 3 + len(block.splitlines())


def test_claude_code_memory_index_links_become_their_text() -> None:
    memory = (
        "---\nname: memory\n---\n"
        "- [Testing](testing.md) — run pytest with -x first\n"
        "- [Deploys](deploys.md) — never on Fridays\n"
    )
    rules = parse_memory_file(memory).rules
    assert [(r.line, r.text) for r in rules] == [
        (4, "Testing — run pytest with -x first"),
        (5, "Deploys — never on Fridays"),
    ]


def test_a_json_export_keeps_roles_and_confidence() -> None:
    export = {
        "format_version": 1,
        "agent_id": "coder",
        "beliefs": [
            {"id": "b_1", "content": "Tag releases", "status": "active", "confidence": 0.9},
            {"id": "b_2", "content": "Old", "status": "superseded", "confidence": 0.5},
            {"id": "b_3", "content": "Review", "status": "active", "role": "reviewer"},
            {"id": "b_4", "content": "Bad", "status": "active", "role": "Not A Slug"},
        ],
    }
    parsed = parse_memory_file(json.dumps(export, indent=2))
    assert parsed.kind == "export"
    assert [(r.text, r.role, r.confidence) for r in parsed.rules] == [
        ("Tag releases", None, 0.9),
        ("Review", "reviewer", None),
    ]
    assert parsed.rules[0].line == 6 and "role" in parsed.skipped[0].reason


def test_rules_too_long_for_a_belief_are_skipped_not_cut() -> None:
    parsed = parse_memory_file("- " + "x" * 2001 + "\n- short\n")
    assert [r.text for r in parsed.rules] == ["short"]
    assert parsed.skipped[0].line == 1 and "2000" in parsed.skipped[0].reason


@pytest.mark.parametrize("text", ["{not json", '{"beliefs": 3}', "<!-- BEGIN credence:x -->\n"])
def test_unreadable_files_raise_a_clear_error(text: str) -> None:
    with pytest.raises(MemoryFileError):
        parse_memory_file(text)
