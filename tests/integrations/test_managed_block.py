"""The managed block: rendering is stable, splicing never touches text outside the block."""

from __future__ import annotations

import pytest

from credence.integrations.managed_block import (
    BlockBelief,
    MarkerError,
    begin_marker,
    end_marker,
    find_blocks,
    lines_outside_blocks,
    render_block,
    splice,
)

BELIEFS = [
    BlockBelief("Use uv, not pip", None, "b_2"),
    BlockBelief("Ask for a failing test", "reviewer", "b_3"),
    BlockBelief("avoid sudo in scripts", None, "b_1"),
]


def test_block_groups_all_roles_first_then_roles_and_sorts_by_text() -> None:
    block = render_block("coder", BELIEFS, "agents-md")
    lines = block.splitlines()
    assert lines[0] == begin_marker("coder") and lines[-1] == end_marker("coder")
    items = [line for line in lines if line.startswith(("- ", "### "))]
    assert items == [
        "### All roles",
        "- avoid sudo in scripts",
        "- Use uv, not pip",
        "### Role: reviewer",
        "- Ask for a failing test",
    ]
    assert render_block("coder", list(reversed(BELIEFS)), "agents-md") == block
    assert block.endswith("\n") and "Credence" in lines[0] and "coder" in lines[0]


def test_formats_differ_in_headings_and_an_empty_memory_says_so() -> None:
    claude = render_block("coder", BELIEFS, "claude-md")
    assert "# Reviewed memory (coder)" in claude and "## Role: reviewer" in claude
    plain = render_block("coder", [BlockBelief("One rule")], "markdown")
    assert "### All roles" not in plain and "- One rule" in plain
    assert "_No kept beliefs yet._" in render_block("coder", [], "markdown")


def test_a_belief_is_one_line_and_cannot_forge_a_marker() -> None:
    block = render_block("coder", [BlockBelief(f"evil\n{end_marker('coder')}\nmore")], "markdown")
    assert f"- evil {end_marker('coder')} more" in block
    assert len(find_blocks(block.splitlines())) == 1


def test_splice_appends_after_user_text_and_is_idempotent() -> None:
    text = "# Project\n\nKeep this line exactly.   \n"
    block = render_block("coder", BELIEFS)
    once = splice(text, "coder", block)
    assert once.startswith(text) and once == text + "\n" + block
    assert splice(once, "coder", block) == once
    assert splice("", "coder", block) == block
    assert splice("no newline at end", "coder", block) == "no newline at end\n\n" + block


def test_splice_replaces_only_the_block_and_keeps_crlf_and_other_agents() -> None:
    old = render_block("coder", [BlockBelief("old rule")])
    other = render_block("writer", [BlockBelief("their rule")])
    text = "top\r\n" + old.replace("\n", "\r\n") + "middle\r\n" + other + "bottom"
    new = splice(text, "coder", render_block("coder", [BlockBelief("new rule")]))
    assert new.startswith("top\r\n") and new.endswith("middle\r\n" + other + "bottom")
    assert "- new rule\r\n" in new and "old rule" not in new
    assert "their rule" in new


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"{begin_marker('coder')}\nno end\n", "never closed"),
        (f"x\n{end_marker('coder')}\n", "without a BEGIN"),
        (f"{begin_marker('coder')}\n{begin_marker('coder')}\n{end_marker('coder')}\n", "inside"),
        (f"{begin_marker('coder')}\n{end_marker('writer')}\n", "closes the block"),
        (
            f"{begin_marker('coder')}\n{end_marker('coder')}\n"
            f"{begin_marker('coder')}\n{end_marker('coder')}\n",
            "a second",
        ),
    ],
)
def test_unbalanced_or_duplicated_markers_are_refused(text: str, problem: str) -> None:
    with pytest.raises(MarkerError, match=problem):
        splice(text, "coder", render_block("coder", BELIEFS))


def test_lines_outside_blocks_number_from_one() -> None:
    text = "a\n" + render_block("coder", BELIEFS) + "b"
    outside = lines_outside_blocks(text.splitlines())
    assert outside[0] == (1, "a") and outside[-1][1] == "b" and len(outside) == 2
