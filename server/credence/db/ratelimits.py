"""Rate-limit token buckets in the database, so every replica spends from the same bucket."""

from __future__ import annotations

from credence.db.engine import Connection, one_row


async def take(
    conn: Connection, bucket: str, *, capacity: float, per_second: float, now: float
) -> tuple[bool, float]:
    """Spend one token from ``bucket`` in one statement: (allowed, tokens left afterwards).

    The bucket refills continuously at ``per_second`` up to ``capacity``; a new bucket starts
    full. The upsert locks the one row, so concurrent requests of one caller on any replica
    are counted one after the other.
    """
    least = "LEAST" if conn.dialect == "postgresql" else "MIN"
    greatest = "GREATEST" if conn.dialect == "postgresql" else "MAX"
    refill = (
        f"{least}(:capacity, rate_buckets.tokens"
        f" + {greatest}(0.0, excluded.at - rate_buckets.at) * :rate)"
    )
    row = await one_row(
        conn,
        "INSERT INTO rate_buckets(bucket, tokens, at, allowed) VALUES (:bucket, :start, :now, 1)"
        " ON CONFLICT (bucket) DO UPDATE SET"
        f" tokens = CASE WHEN {refill} >= 1.0 THEN {refill} - 1.0 ELSE {refill} END,"
        f" allowed = CASE WHEN {refill} >= 1.0 THEN 1 ELSE 0 END,"
        f" at = {greatest}(rate_buckets.at, excluded.at)"
        " RETURNING allowed, tokens",
        {
            "bucket": bucket,
            "start": capacity - 1.0,
            "now": now,
            "capacity": capacity,
            "rate": per_second,
        },
    )
    return bool(row["allowed"]), float(row["tokens"])


async def forget_idle(conn: Connection, *, before: float) -> int:
    """Drop buckets untouched since ``before`` (they have refilled); how many went."""
    return await conn.run("DELETE FROM rate_buckets WHERE at < ?", (before,))
