"""Instruction files: the managed-block export and the memory-file import."""

from __future__ import annotations

import hashlib
import logging
from typing import Annotated

from litestar import Controller, Request, Response, get, post
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import JSONBody, QueryParameter

from credence.api.agents import load_agent
from credence.api.context import MarkdownExportOperation
from credence.api.deps import SharedServices, principal_of, services_of
from credence.api.errors import errors
from credence.api.params import AgentIdPath
from credence.integrations.managed_block import BlockBelief, render_block
from credence.integrations.memory_files import MemoryFileError, Rule, parse_memory_file
from credence.memory.ingest.episodes import AgentMissing
from credence.memory.read.export import export_memory
from credence.models import ProposalIn, ProposedBy
from credence.models.instructions import (
    MAX_IMPORT_RULES,
    BlockFormatName,
    ImportedRule,
    MemoryImportIn,
    MemoryImportResult,
    SkippedRule,
)

audit_log = logging.getLogger("credence.audit")
# Proposals are gated in batches so one huge file never holds the writer for long.
IMPORT_BATCH = 50

FormatQuery = Annotated[
    BlockFormatName,
    QueryParameter(
        name="format",
        description="The block's heading style: agents-md (AGENTS.md), claude-md (CLAUDE.md)"
        " or markdown",
    ),
]


def _evidence(filename: str, rule: Rule) -> str:
    return f"Imported from {filename} line {rule.line}."


class InstructionsController(Controller):
    """/api/v1/agents/{agent_id}/memory/export/block and /memory/import"""

    path = "/agents/{agent_id:str}/memory"
    tags = ["agent integration"]

    @get(
        "/export/block",
        operation_id="exportMemoryBlock",
        operation_class=MarkdownExportOperation,
        media_type="text/markdown; charset=utf-8",
        responses=errors(404),
    )
    async def export_block(
        self, request: Request, agent_id: AgentIdPath, fmt: FormatQuery = "agents-md"
    ) -> Response[str]:
        """The agent's active beliefs as the managed block `credence sync` writes into a file.

        The block sits between marker comments naming Credence and the agent; beliefs are
        grouped by role (all-role ones first) and sorted by text, so the same memory always
        renders the same block. Each export is written to the server's audit log.
        """
        principal_of(request).require_agent(agent_id)
        services = services_of(request)
        try:
            exported = await export_memory(services.store, services.clock, agent_id)
        except AgentMissing:
            raise NotFoundException(f"agent {agent_id!r} not found") from None
        block = render_block(
            agent_id,
            [
                BlockBelief(content=b.content, role=b.role, belief_id=b.id)
                for b in exported.beliefs
                if b.status == "active"
            ],
            fmt,
        )
        audit_log.info(
            "audit: %s exported the memory block of %s (%s, %d lines, sha256 %s)",
            principal_of(request).actor,
            agent_id,
            fmt,
            block.count("\n"),
            hashlib.sha256(block.encode()).hexdigest()[:16],
        )
        return Response(block, media_type="text/markdown; charset=utf-8")

    @post("/import", operation_id="importMemory", status_code=200, responses=errors(403, 404, 422))
    async def import_file(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        data: JSONBody[MemoryImportIn],
    ) -> MemoryImportResult:
        """Turn each rule of a memory file into a pending proposal through the normal gate.

        Reads CLAUDE.md, AGENTS.md, Claude Code's MEMORY.md, a Markdown list or the JSON of
        ``/memory/export``. Every accepted rule waits for a human (provenance ``imported``, the
        file and line in its rationale and audit row); duplicates of what memory already holds
        are rejected with a reason. ``dry_run`` only reports the rules. A reviewer key needs an
        admin's write grant (403 otherwise).
        """
        await load_agent(request, agent_id)
        principal_of(request).require_writer()
        if "\x00" in data.text:
            raise ClientException(
                "text: holds a NUL character; a memory file is text", status_code=422
            )
        try:
            parsed = parse_memory_file(data.text)
        except MemoryFileError as exc:
            raise ClientException(f"text: {exc}", status_code=422) from None
        if len(parsed.rules) > MAX_IMPORT_RULES:
            raise ClientException(
                f"text: {len(parsed.rules)} rules, more than {MAX_IMPORT_RULES} in one import",
                status_code=422,
            )
        skipped = [SkippedRule(line=s.line, reason=s.reason) for s in parsed.skipped]
        if data.dry_run:
            rules = [
                ImportedRule(
                    line=r.line, text=r.text, accepted=None, belief_id=None, rejected_reason=None
                )
                for r in parsed.rules
            ]
        else:
            rules = await _propose(services, request, agent_id, data, parsed.rules)
        principal = principal_of(request)
        audit_log.info(
            "audit: %s imported %s into %s (%d rules, %d accepted, dry run %s)",
            principal.actor,
            data.filename,
            agent_id,
            len(rules),
            sum(1 for r in rules if r.accepted),
            data.dry_run,
        )
        return MemoryImportResult(
            filename=data.filename,
            kind="export" if parsed.kind == "export" else "markdown",
            dry_run=data.dry_run,
            rules=rules,
            skipped=skipped,
            managed_lines=parsed.managed_lines,
        )


async def _propose(
    services: SharedServices,
    request: Request,
    agent_id: str,
    data: MemoryImportIn,
    rules: list[Rule],
) -> list[ImportedRule]:
    principal = principal_of(request)
    out: list[ImportedRule] = []
    for start in range(0, len(rules), IMPORT_BATCH):
        batch = rules[start : start + IMPORT_BATCH]
        proposals = [
            ProposalIn(
                op="add",
                belief=rule.text,
                confidence=rule.confidence if rule.confidence is not None else data.confidence,
                rationale=_evidence(data.filename, rule),
                role=rule.role,
            )
            for rule in batch
        ]
        results = await services.beliefs.propose(
            agent_id,
            proposals,
            ProposedBy(key_id=principal.key_id),
            principal.actor,
            imported=True,
        )
        out += [
            ImportedRule(
                line=rule.line,
                text=rule.text,
                accepted=result.accepted,
                belief_id=result.belief_id,
                rejected_reason=result.rejected_reason,
            )
            for rule, result in zip(batch, results, strict=True)
        ]
    return out
