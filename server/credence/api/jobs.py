"""Jobs: submit a reflection run, follow its steps, read its output."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.exceptions import PermissionDeniedException
from litestar.params import JSONBody, PathParameter, QueryParameter

from credence.api.agents import load_agent
from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.api.params import Cursor, Limit
from credence.clock import rfc3339
from credence.errors import NotFound
from credence.memory.ingest.redact import REDACTION_SECRET
from credence.models import ID_PATTERN, SLUG_PATTERN, Job, JobIn, JobPage, JobStatus
from credence.reflection import jobs
from credence.reflection.engine import runner_of

JobIdPath = Annotated[str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Job id")]
JobStatusFilter = Annotated[JobStatus | None, QueryParameter(description="Filter by status")]
JobAgentFilter = Annotated[
    str | None,
    QueryParameter(pattern=SLUG_PATTERN, max_length=64, description="Only this agent's jobs"),
]


class JobController(Controller):
    """/api/v1/jobs"""

    path = "/jobs"
    tags = ["jobs"]

    @post(
        operation_id="submitJob",
        status_code=202,
        responses=errors(403, 404, 422),
        response_headers=[
            ResponseHeader(
                name="Location", description="Where to follow the job", documentation_only=True
            )
        ],
    )
    async def submit(
        self, request: Request, services: SharedServices, data: JSONBody[JobIn]
    ) -> Response[Job]:
        """Queue an agent-reflection job; it runs in the background (poll GET /jobs/{id}).

        ``now`` (a pinned clock) and ``stub_output`` (hand-written model output) are for tests
        and operators: only an admin key may send them (403 otherwise). The job records the key
        that started it, and its proposals credit that key.
        """
        principal = principal_of(request)
        await load_agent(request, data.input_data.agent_id)
        if principal.scope != "admin":
            for name in ("now", "stub_output"):
                if getattr(data.input_data, name) is not None:
                    raise PermissionDeniedException(
                        f"input_data.{name}: only an admin key may pin a job's clock or write"
                        " its model output"
                    )
        stored = jobs.manual_input(
            data, bool(services.settings.llm_url), services.store.secret(REDACTION_SECRET)
        )
        job = await jobs.submit(
            services.store,
            agent_id=data.input_data.agent_id,
            trigger="manual",
            input_data=stored,
            now=rfc3339(services.clock()),
            submitted_by=principal.actor,
        )
        runner = runner_of(services)
        if runner is not None:
            runner.wake()
        return Response(job, status_code=202, headers={"Location": f"/api/v1/jobs/{job.id}"})

    @get(operation_id="listJobs", responses=errors())
    async def list_jobs(
        self,
        request: Request,
        services: SharedServices,
        agent_id: JobAgentFilter = None,
        status: JobStatusFilter = None,
        limit: Limit = 50,
        cursor: Cursor = None,
    ) -> JobPage:
        """Jobs of the agents this key can see, newest first."""
        agent_ids = principal_of(request).visible_agents(agent_id)
        if agent_ids == []:
            return JobPage(items=[], next_cursor=None)
        items, next_cursor = await jobs.list_jobs(
            services.store,
            agent_ids=agent_ids,
            status=status,
            limit=limit,
            cursor=cursor,
        )
        return JobPage(items=items, next_cursor=next_cursor)

    @get("/{job_id:str}", operation_id="getJob", responses=errors(404))
    async def get_job(self, request: Request, services: SharedServices, job_id: JobIdPath) -> Job:
        """One job: status, steps with timing and errors, input and output."""
        job = await jobs.get(services.store, job_id)
        if job is None or not principal_of(request).sees_agent(job.agent_id):
            raise NotFound(f"job {job_id!r} not found")
        return job
