"""Background tasks: a lost cancellation is sent again; waits honour cancellation; polling loops."""

from __future__ import annotations

import asyncio

import pytest

from credence.tasks import PollingLoop, cancel_and_wait, wait_or_timeout


async def test_a_task_that_swallows_one_cancellation_is_still_stopped() -> None:
    swallowed = []

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed.append(True)  # what a library's lost cancellation looks like

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    await asyncio.wait_for(cancel_and_wait(task), timeout=5)
    assert task.cancelled() and swallowed == [True]


async def test_cancel_and_wait_on_a_finished_task_returns_at_once() -> None:
    async def fails() -> None:
        raise RuntimeError("boom")

    task = asyncio.create_task(fails())
    await asyncio.sleep(0)
    await cancel_and_wait(task)  # its exception is the owner's to log, not re-raised here
    assert task.done()


async def test_wait_or_timeout_says_whether_the_event_was_set() -> None:
    event = asyncio.Event()
    assert await wait_or_timeout(event, 0.01) is False
    event.set()
    assert await wait_or_timeout(event, 5) is True
    assert await wait_or_timeout(event, -1) is True  # already set: no wait at all


async def test_a_cancelled_wait_raises_even_when_the_event_is_set_at_that_moment() -> None:
    event = asyncio.Event()
    task = asyncio.create_task(wait_or_timeout(event, 60))
    await asyncio.sleep(0)
    event.set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


class _Counting(PollingLoop):
    """Counts its passes; the first raises, then it asks to sleep ``sleep`` seconds."""

    name = "counting"

    def __init__(self, sleep: float | None) -> None:
        super().__init__(poll_seconds=30.0)
        self.sleep = sleep
        self.passes = 0

    async def run_pass(self) -> float | None:
        self.passes += 1
        if self.passes == 1:
            raise RuntimeError("a failing pass")
        return self.sleep


async def _until(condition, seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.005)


async def test_a_polling_loop_survives_a_failing_pass_and_runs_again_when_woken(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = _Counting(sleep=None)
    await loop.start()
    try:
        await _until(lambda: loop.passes == 1)
        loop.wake()  # the poll is 30 s: only the wake can bring the second pass this soon
        await _until(lambda: loop.passes == 2)
    finally:
        await loop.stop()
    assert "counting: a pass failed; retrying" in caplog.text
    await asyncio.sleep(0.05)
    assert loop.passes == 2  # stopped: no pass after stop()


async def test_a_polling_loop_sleeps_no_longer_than_its_pass_asks() -> None:
    loop = _Counting(sleep=0.0)
    await loop.start()
    try:
        await _until(lambda: loop.passes == 1)
        loop.wake()  # past the failing pass, each pass asks for no sleep at all
        await _until(lambda: loop.passes >= 4)
    finally:
        await loop.stop()
