"""What memory was used: injection counts per served belief, batched off the response path."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from credence.clock import rfc3339
from credence.db import beliefs as rows_of
from credence.tasks import cancel_and_wait

if TYPE_CHECKING:
    from credence.db.engine import Connection, Database

log = logging.getLogger("credence.injection")

FLUSH_INTERVAL_S = 0.5


class InjectionRecorder:
    """Collects served belief ids in memory; ``flush`` writes them all in one transaction.

    Recording is a dictionary update, so the context response never waits for the store. The
    flush adds to the stored count (never overwrites it), so several processes sharing one data
    dir each add their own servings. It touches neither version nor updated_at: using a belief
    must not make a reviewer's If-Match stale or reset its decay.
    """

    def __init__(self) -> None:
        self._pending: dict[str, tuple[int, datetime]] = {}

    def record(self, belief_ids: Iterable[str], at: datetime) -> None:
        """Count one serving of each belief at ``at`` (formatted only when flushed)."""
        pending = self._pending
        for belief_id in belief_ids:
            seen = pending.get(belief_id)
            if seen is None:
                pending[belief_id] = (1, at)
            else:
                pending[belief_id] = (seen[0] + 1, max(seen[1], at))

    @property
    def pending(self) -> int:
        """How many beliefs have servings not yet written."""
        return len(self._pending)

    def _take(self) -> dict[str, tuple[int, datetime]]:
        taken, self._pending = self._pending, {}
        return taken

    def _give_back(self, taken: dict[str, tuple[int, datetime]]) -> None:
        for belief_id, (count, last) in taken.items():
            now_count, now_last = self._pending.get(belief_id, (0, last))
            self._pending[belief_id] = (count + now_count, max(last, now_last))

    async def flush(self, store: Database) -> int:
        """Write every pending serving in one write; returns how many beliefs were updated."""
        taken = self._take()
        if not taken:
            return 0
        servings = [(belief_id, count, rfc3339(last)) for belief_id, (count, last) in taken.items()]

        async def work(conn: Connection) -> None:
            await rows_of.add_injections(conn, servings)

        try:
            await store.write(work)
        except BaseException:
            # Keep the servings for the next flush rather than lose what memory was used.
            self._give_back(taken)
            raise
        return len(servings)


async def flush_forever(
    recorder: InjectionRecorder, store: Database, interval_s: float = FLUSH_INTERVAL_S
) -> None:
    """Flush every ``interval_s`` until cancelled; a failed flush is logged and retried."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await recorder.flush(store)
        except Exception:
            log.exception("could not record injections; will retry")


async def stop_flushing(
    task: asyncio.Task[None], recorder: InjectionRecorder, store: Database
) -> None:
    """Cancel the flush loop and write what is still pending (called before the store closes)."""
    await cancel_and_wait(task)
    try:
        await recorder.flush(store)
    except Exception:
        log.exception("could not record the last injections at shutdown")
