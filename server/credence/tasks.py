"""Waiting for and stopping background tasks safely on Python 3.11's asyncio."""

from __future__ import annotations

import asyncio
import contextlib
import logging

log = logging.getLogger(__name__)
# How long one cancellation may take to land before it is sent again.
RECANCEL_S = 0.5


async def wait_or_timeout(event: asyncio.Event, seconds: float) -> bool:
    """Wait until ``event`` is set or ``seconds`` pass; True when it was set.

    Python 3.11's ``asyncio.wait_for`` can swallow a cancellation that arrives as the event is
    set; ``asyncio.timeout`` does not.
    """
    try:
        async with asyncio.timeout(max(seconds, 0.0)):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def cancel_and_wait(task: asyncio.Task[object]) -> None:
    """Cancel ``task`` and wait until it has ended, cancelling again if it carried on.

    A cancellation can be lost on the way (3.11's ``wait_for`` inside a library returns a
    result that arrived at the same moment instead of raising), and a worker loop would then
    run on after shutdown asked it to stop, holding the app's shutdown for ever.
    """
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=RECANCEL_S)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()


class PollingLoop:
    """A background loop that runs one pass, then sleeps until woken or its next pass is due.

    Subclasses give ``name`` and ``run_pass``, which returns how long to sleep at the most
    (None: ``poll_seconds``). A pass that raises is logged and retried after the same sleep.
    """

    name = "polling-loop"

    def __init__(self, poll_seconds: float) -> None:
        self.poll_seconds = poll_seconds
        self._event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def run_pass(self) -> float | None:
        """One pass of the loop's work; the longest sleep before the next one, or None."""
        raise NotImplementedError

    def wake(self) -> None:
        """Run a pass now instead of waiting out the sleep."""
        self._event.set()

    async def start(self) -> None:
        """Start the loop."""
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        """Stop the loop and wait until it has ended."""
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def _run(self) -> None:
        while True:
            self._event.clear()
            timeout = self.poll_seconds
            try:
                wanted = await self.run_pass()
                if wanted is not None:
                    timeout = max(0.0, min(timeout, wanted))
            except Exception:
                log.exception("%s: a pass failed; retrying", self.name)
            await wait_or_timeout(self._event, max(timeout, 0.01))
