"""One lease queue for every table whose rows a worker claims: claim, renew, release, recover."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from credence.db.engine import Connection, Row, for_update, skip_locked

# What dropping a lease writes; every statement that finishes a leased row ends with it.
CLEAR = "lease_owner = NULL, lease_until = NULL"
# A lease is free once it lapsed: held while now < lease_until, on every queue alike.
_FREE = "(lease_until IS NULL OR lease_until <= :now)"
_UNCOUNT = "attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END"


@dataclass(frozen=True)
class Queue:
    """How one table's rows are leased.

    Every field is SQL written in this module (the allow-list below), never a caller's text;
    fragments may use the ``:now`` parameter every statement binds.
    """

    table: str
    key: str = "id"
    # A row that waits for a worker (its lease aside); ``due`` narrows it to rows due now.
    waiting: str = ""
    due: str = ""
    order: str = "id"
    # A row whose lease recovery looks at.
    held: str = "lease_owner IS NOT NULL"
    # More columns a claim, a renewal and a release write.
    on_claim: str = ""
    on_renew: str = ""
    on_release: str = ""
    # What retiring a row whose last allowed attempt lapsed writes (may use ``:error``).
    on_exhausted: str = ""
    # Columns beyond key, owner, expiry and attempts that ``held_leases`` returns.
    report: str = ""
    counts_attempts: bool = True
    # One row per named lease: the claim inserts it and the release deletes it.
    named: bool = False


_PUSH = Queue(
    "push_outbox",
    waiting="state = 'queued'",
    due="next_attempt_at <= :now",
    order="next_attempt_at, id",
    on_exhausted="state = 'failed', finished_at = :now, last_error = :error",
)

# The allow-list: no other table is ever named in a lease statement.
QUEUES: Mapping[str, Queue] = MappingProxyType(
    {
        "jobs": Queue(
            "jobs",
            waiting="status = 'queued'",
            order="created_at, id",
            held="status = 'running'",
            on_claim="status = 'running', heartbeat_at = :now,"
            " started_at = COALESCE(started_at, :now), updated_at = :now",
            on_renew="heartbeat_at = :now",
            on_release="status = 'queued', updated_at = :now",
            report=", max_attempts",
        ),
        "push_outbox": _PUSH,
        "channel_outbox": replace(_PUSH, table="channel_outbox"),
        "backfill_leases": Queue("backfill_leases", key="name", counts_attempts=False, named=True),
    }
)


def queue(name: str) -> Queue:
    """The lease queue of table ``name``; ValueError for a table not in the allow-list."""
    try:
        return QUEUES[name]
    except KeyError:
        raise ValueError(f"not a lease queue: {name!r}") from None


def _and(*conditions: str) -> str:
    return " AND ".join(condition for condition in conditions if condition)


def _sets(*assignments: str) -> str:
    return ", ".join(assignment for assignment in assignments if assignment)


def _claim_sets(found: Queue) -> str:
    attempts = "attempts = attempts + 1" if found.counts_attempts else ""
    return _sets("lease_owner = :owner, lease_until = :until", attempts, found.on_claim)


def _queued(name: str) -> Queue:
    found = queue(name)
    if found.named:
        raise ValueError(f"{name!r} holds named leases: use acquire")
    return found


def lapsed(until: str | None, now: str) -> bool:
    """Whether a lease expiring at ``until`` (RFC 3339 text, None: none) is free at ``now``."""
    return until is None or until <= now


async def claim(
    conn: Connection, name: str, *, owner: str, now: str, until: str, limit: int
) -> list[Row]:
    """Lease up to ``limit`` due waiting rows with a free lease to ``owner``; their keys.

    ``attempts`` counts at the claim, so a row that kills its worker cannot loop forever. On
    PostgreSQL rows another transaction is claiming are skipped (SKIP LOCKED): two claimers at
    once take different rows, and never wait for each other.
    """
    found = _queued(name)
    rows = await conn.rows(
        f"UPDATE {found.table} SET {_claim_sets(found)} WHERE {found.key} IN"
        f" (SELECT {found.key} FROM {found.table} WHERE {_and(found.waiting, found.due, _FREE)}"
        f" ORDER BY {found.order} LIMIT :limit{skip_locked(conn)}) RETURNING {found.key}",
        {"owner": owner, "until": until, "now": now, "limit": limit},
    )
    return [row[0] for row in rows]


async def take(conn: Connection, name: str, key: str, *, owner: str, now: str, until: str) -> bool:
    """Lease the one row ``key`` to ``owner`` if it waits with a free lease; whether it did."""
    found = _queued(name)
    changed = await conn.run(
        f"UPDATE {found.table} SET {_claim_sets(found)}"
        f" WHERE {found.key} = :key AND {_and(found.waiting, _FREE)}",
        {"owner": owner, "until": until, "now": now, "key": key},
    )
    return changed == 1


async def acquire(
    conn: Connection, name: str, key: str, *, owner: str, now: str, until: str
) -> bool:
    """Take (or renew) the named lease ``key`` unless another owner holds it unlapsed."""
    found = queue(name)
    if not found.named:
        raise ValueError(f"{name!r} leases its rows: use claim or take")
    table = found.table
    row = await conn.one(
        f"INSERT INTO {table}({found.key}, lease_owner, lease_until) VALUES (:key, :owner, :until)"
        f" ON CONFLICT({found.key}) DO UPDATE SET lease_owner = excluded.lease_owner,"
        " lease_until = excluded.lease_until"
        f" WHERE {table}.lease_owner = excluded.lease_owner OR {table}.lease_until <= :now"
        " RETURNING lease_owner",
        {"key": key, "owner": owner, "until": until, "now": now},
    )
    return row is not None and row[0] == owner


async def renew(conn: Connection, name: str, key: str, *, owner: str, now: str, until: str) -> bool:
    """Extend ``owner``'s lease on ``key`` to ``until`` (a heartbeat); False when it is not
    the owner's any more. Another owner's lease is never touched."""
    found = queue(name)
    changed = await conn.run(
        f"UPDATE {found.table} SET {_sets('lease_until = :until', found.on_renew)}"
        f" WHERE {_and(f'{found.key} = :key', 'lease_owner = :owner', found.held)}",
        {"until": until, "now": now, "key": key, "owner": owner},
    )
    return changed == 1


async def holds(
    conn: Connection, name: str, key: str, owner: str, *, now: str | None = None
) -> bool:
    """Whether ``owner`` holds the lease on ``key`` (unlapsed at ``now`` when given).

    On PostgreSQL the row stays locked until the caller commits: this is the fence, so work
    committed under the lease and another worker's takeover never interleave.
    """
    found = queue(name)
    unlapsed = "lease_until > :now" if now is not None else ""
    row = await conn.one(
        f"SELECT 1 FROM {found.table} WHERE"
        f" {_and(f'{found.key} = :key', 'lease_owner = :owner', found.held, unlapsed)}"
        + for_update(conn),
        {"key": key, "owner": owner, "now": now},
    )
    return row is not None


async def release(conn: Connection, name: str, key: str, *, owner: str, now: str) -> bool:
    """Hand back ``owner``'s lease on ``key`` unstarted, forgiving the attempt its claim counted.

    A non-owner's release changes nothing; returns whether the lease was released.
    """
    found = queue(name)
    where = _and(f"{found.key} = :key", "lease_owner = :owner", found.held)
    if found.named:
        changed = await conn.run(
            f"DELETE FROM {found.table} WHERE {where}", {"key": key, "owner": owner}
        )
        return changed == 1
    uncount = _UNCOUNT if found.counts_attempts else ""
    changed = await conn.run(
        f"UPDATE {found.table} SET {_sets(CLEAR, uncount, found.on_release)} WHERE {where}",
        {"key": key, "owner": owner, "now": now},
    )
    return changed == 1


def finish_statement(name: str, assignments: str) -> str:
    """``UPDATE … SET assignments, <lease dropped> WHERE key = ?`` for a finished row.

    ``assignments`` is literal SQL of the calling store module with ``?`` placeholders (never
    outside text); the row key is the last parameter.
    """
    found = _queued(name)
    return f"UPDATE {found.table} SET {_sets(assignments, CLEAR)} WHERE {found.key} = ?"


# --- recovery ---------------------------------------------------------------------------------


async def held_leases(conn: Connection, name: str) -> list[Row]:
    """Every row recovery looks at: key, lease_owner, lease_until, attempts (and the queue's
    report columns), by key."""
    found = _queued(name)
    return await conn.rows(
        f"SELECT {found.key}, lease_owner, lease_until, attempts{found.report}"
        f" FROM {found.table} WHERE {found.held} ORDER BY {found.key}"
    )


async def lock_held(conn: Connection, name: str, key: str, owner: str | None) -> Row | None:
    """Row ``key`` if ``owner`` (None: nobody) still holds it, locked for a takeover, or None.

    On PostgreSQL a row another transaction holds (its owner committing under the lease, or
    another worker recovering it) is skipped: that one decides, this one leaves it alone.
    """
    found = _queued(name)
    owner_clause = "lease_owner IS NULL" if owner is None else "lease_owner = :owner"
    return await conn.one(
        f"SELECT {found.key}, lease_owner, lease_until, attempts{found.report}"
        f" FROM {found.table} WHERE {_and(f'{found.key} = :key', found.held, owner_clause)}"
        + skip_locked(conn),
        {"key": key, "owner": owner},
    )


async def reclaim(conn: Connection, name: str, key: str, *, now: str) -> None:
    """Put row ``key`` back in the queue after its worker was lost; the attempt stays counted.

    Call it on a row ``lock_held`` returned, in the same transaction.
    """
    found = _queued(name)
    await conn.run(
        f"UPDATE {found.table} SET {_sets(CLEAR, found.on_release)} WHERE {found.key} = :key",
        {"key": key, "now": now},
    )


async def retire_exhausted(
    conn: Connection, name: str, *, now: str, max_attempts: int, error: str
) -> int:
    """Retire waiting rows whose last allowed attempt lapsed without a result; how many.

    On PostgreSQL rows another worker holds are left to it (SKIP LOCKED): never worth a wait.
    """
    found = _queued(name)
    return await conn.run(
        f"UPDATE {found.table} SET {_sets(found.on_exhausted, CLEAR)} WHERE {found.key} IN"
        f" (SELECT {found.key} FROM {found.table} WHERE {found.waiting}"
        " AND attempts >= :max_attempts AND lease_until IS NOT NULL AND lease_until <= :now"
        f"{skip_locked(conn)})",
        {"now": now, "max_attempts": max_attempts, "error": error},
    )
