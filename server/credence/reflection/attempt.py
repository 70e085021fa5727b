"""One attempt at a job: its steps in order, each recorded with its checkpoint as it finishes."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from credence.observe import metrics, tracing
from credence.reflection import jobs, steps
from credence.reflection.checkpoints import AnswerMeta, Checkpoint, PullCheckpoint, resume
from credence.reflection.deps import ReflectionDeps
from credence.reflection.steps import JobRun, StepError

log = logging.getLogger("credence.reflection")

# A retry does not repeat these once they succeeded: pull's episodes and propose's stored
# answer stand. Check and submit always run again (submit knows what an earlier attempt made).
RESUMABLE_STEPS = ("pull", "propose")

Output = TypeVar("Output", steps.Pulled, steps.Proposed, steps.Checked, steps.Submitted)
Saved = TypeVar("Saved", PullCheckpoint, AnswerMeta)


class _Failed(Exception):
    """A step failed and the job was marked failed; the attempt stops."""


class Attempt:
    """Runs pull → propose → check → submit for one claimed job, writing each step's record.

    A finished step is recorded together with the start of the next (one write each); the
    last one is recorded with the job's success and the episode watermark.
    """

    def __init__(self, deps: ReflectionDeps, run: JobRun, records: dict[str, Any]) -> None:
        self.deps = deps
        self.run = run
        self.records = records
        self.finished: tuple[str, float, Checkpoint] | None = None
        self.started = time.perf_counter()

    async def steps(self) -> None:
        """Run every step; a failing step fails the job and ends the attempt."""
        deps, run = self.deps, self.run
        saved_pull = self._saved("pull", PullCheckpoint)
        saved_answer = self._saved("propose", AnswerMeta)
        try:
            pulled = await self._step(
                "pull", lambda: steps.pull(deps, run, saved_pull), self._done("pull", saved_pull)
            )
            proposed = await self._step(
                "propose",
                lambda: steps.propose(deps, run, pulled, saved_answer),
                self._done("propose", saved_answer),
            )
            checked = await self._step("check", lambda: steps.check(deps, run, proposed))
            await self._step("submit", lambda: steps.submit(deps, run, checked))
        except _Failed:
            metrics.observe_reflection("failed", time.perf_counter() - self.started)

    def _saved(self, name: str, kind: type[Saved]) -> Saved | None:
        return resume(self.records[name]["output"], kind)

    def _done(self, name: str, saved: Checkpoint | None) -> bool:
        """Whether an earlier attempt finished the step and left a checkpoint this one reads.

        A finished step whose checkpoint is unreadable runs afresh and is recorded anew, so a
        later retry resumes from what this attempt did.
        """
        return (
            name in RESUMABLE_STEPS
            and saved is not None
            and self.records[name]["status"] == "succeeded"
        )

    async def _step(
        self, name: str, call: Callable[[], Awaitable[Output]], resumed: bool = False
    ) -> Output:
        deps, run = self.deps, self.run
        if not resumed:
            await jobs.advance(
                deps.store, run.job_id, run.owner, at=run.now(), done=self.finished, start=name
            )
            self.finished = None
        started = time.perf_counter()
        try:
            with tracing.span(f"reflection {name}", {"credence.job.id": run.job_id}):
                output = await call()
        except StepError as exc:
            await self._fail(name, started, str(exc))
            raise _Failed from exc
        except jobs.LeaseLost:
            raise
        except Exception as exc:
            log.exception("job %s: step %s failed unexpectedly", run.job_id, name)
            await self._fail(name, started, f"internal error: {type(exc).__name__}: {exc}")
            raise _Failed from exc
        elapsed = (time.perf_counter() - started) * 1000
        if isinstance(output, steps.Submitted):
            await jobs.succeed(
                deps.store,
                run.job_id,
                run.owner,
                agent_id=run.agent_id,
                at=run.now(),
                duration_ms=elapsed,
                output=steps.job_output(output),
                reflected_ids=output.checked.proposed.checkpoint.considered,
                submit_output=output.checkpoint,
            )
            metrics.observe_reflection("succeeded", time.perf_counter() - self.started)
        elif not resumed:
            self.finished = (name, elapsed, output.checkpoint)
        return output

    async def _fail(self, name: str, started: float, error: str) -> None:
        await jobs.fail(
            self.deps.store,
            self.run.job_id,
            self.run.owner,
            step=name,
            at=self.run.now(),
            duration_ms=(time.perf_counter() - started) * 1000,
            error=error,
        )
