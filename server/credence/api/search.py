"""Recall search: an agent's episodes ranked for free-text queries."""

from __future__ import annotations

from litestar import Controller, Request, post
from litestar.exceptions import ClientException, HTTPException
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody

from credence.api.agents import load_agent
from credence.api.deps import SharedServices
from credence.api.errors import errors
from credence.api.params import AgentIdPath
from credence.clock import rfc3339
from credence.memory.ingest.episodes import episode_from_row
from credence.memory.read import recall
from credence.models import Problem, SearchHit, SearchIn, SearchResult
from credence.observe import tracing
from credence.services import Services

UNAVAILABLE = {
    503: ResponseSpec(
        data_container=Problem,
        description="Recall search cannot run right now (the embedder is unavailable).",
        generate_examples=False,
    )
}


class SearchController(Controller):
    """/api/v1/agents/{agent_id}/memory/search"""

    path = "/agents/{agent_id:str}/memory/search"
    tags = ["episodes"]

    @post(
        operation_id="searchMemory",
        status_code=200,
        responses={**errors(404, 422), **UNAVAILABLE},
    )
    async def search(
        self,
        request: Request,
        services: SharedServices,
        agent_id: AgentIdPath,
        data: JSONBody[SearchIn],
    ) -> SearchResult:
        """Episodes ranked by text match fused with embedding cosine (reciprocal rank fusion)."""
        await load_agent(request, agent_id)
        return await search_memory(services, agent_id, data)


async def search_memory(services: Services, agent_id: str, data: SearchIn) -> SearchResult:
    """Run a recall search for an agent the caller may see (REST and MCP both call this)."""
    with tracing.memory_span("search_memory", agent_id, query="\n".join(data.queries)) as span:
        result = await _search(services, agent_id, data)
        span.set_attribute("gen_ai.memory.record.count", len(result.items))
    return result


async def _search(services: Services, agent_id: str, data: SearchIn) -> SearchResult:
    since = None
    if data.since is not None:
        try:
            since = rfc3339(data.since)
        except (ValueError, OverflowError) as exc:
            raise ClientException(status_code=422, detail=f"since: {exc}") from None
    try:
        hits = await recall.search(
            services.store,
            services.embedder,
            agent_id,
            data.queries,
            data.k,
            since=since,
            reflected=data.reflected,
            include_untrusted=data.include_untrusted,
        )
    except recall.RecallUnavailable as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from None
    return SearchResult(
        items=[
            SearchHit(
                episode=episode_from_row(hit.episode),
                score=round(hit.score, 8),
                text_rank=hit.text_rank,
                vector_rank=hit.vector_rank,
                cosine=round(hit.cosine, 6) if hit.cosine is not None else None,
            )
            for hit in hits
        ]
    )
