"""Waiting for and stopping background tasks safely on Python 3.11's asyncio."""

from __future__ import annotations

import asyncio
import contextlib

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
