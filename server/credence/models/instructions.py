"""Instruction-file models: importing a memory file's rules as proposals."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from credence.models.common import END, Confidence

MAX_IMPORT_CHARS = 1_000_000
MAX_IMPORT_RULES = 2000

BlockFormatName = Literal["agents-md", "claude-md", "markdown"]


class MemoryImportIn(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A memory file's text (CLAUDE.md, AGENTS.md, MEMORY.md, a Markdown list or a JSON export).

    Each rule becomes a pending proposal (provenance ``imported``) with the file and line as
    evidence; lines inside Credence's own managed block are skipped.
    """

    # No pattern here: NUL characters are dropped by the parser (and a pattern on a string this
    # long defeats schema fuzzers' generation).
    text: Annotated[str, Meta(max_length=MAX_IMPORT_CHARS, description="The file's text")]
    filename: Annotated[
        str,
        Meta(
            min_length=1,
            max_length=300,
            pattern=r"^[^\x00-\x1f]*" + END,
            description="Where the text came from, named in each proposal's evidence",
        ),
    ]
    dry_run: Annotated[bool, Meta(description="Only report the rules; propose nothing")] = False
    confidence: Annotated[
        Confidence, Meta(description="For rules whose file gives none (a JSON export does)")
    ] = 0.8


class ImportedRule(Struct, frozen=True, kw_only=True):
    """One rule of the file and what became of it (``accepted`` is null in a dry run)."""

    line: int
    text: str
    accepted: bool | None
    belief_id: str | None
    rejected_reason: str | None


class SkippedRule(Struct, frozen=True, kw_only=True):
    """A candidate rule that was not proposed, and why."""

    line: int
    reason: str


class MemoryImportResult(Struct, frozen=True, kw_only=True):
    """The import's outcome: each rule by line, and what was skipped."""

    filename: str
    kind: Literal["markdown", "export"]
    dry_run: bool
    rules: list[ImportedRule]
    skipped: list[SkippedRule]
    managed_lines: Annotated[
        int, Meta(description="Lines inside Credence's own managed blocks, never imported")
    ]
