"""Web Push fan-out throughput (encrypt + sign + send) against the loopback fake push service."""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

import httpx

# The fake push service is a test helper; the benchmark drives the same loopback fake.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.fakes.push import LOOPBACK, FakePushService

from credence.clock import rfc3339, system_clock
from credence.db.store import Store
from credence.ids import new_id
from credence.notify.endpoints import EndpointPolicy, push_client
from credence.notify.payload import build_payload, topic_for
from credence.notify.vapid import VapidKeys, generate, vapid_headers
from credence.notify.webpush import (
    Outcome,
    Subscription,
    encrypt,
    parse_subscription,
    send,
)
from credence.notify.worker import PushWorker

SUBJECT = "mailto:bench@credence-push.org"
SUBSCRIPTIONS = 20
NOTIFICATIONS = 600
# A modest bound: httpcore's pool bookkeeping grows with open connections (see report).
CONCURRENCY = 8
RUNS = 5
MICRO_ITERATIONS = 400


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0], ordered[0], ordered[0]
    deciles = statistics.quantiles(ordered, n=10, method="inclusive")
    return statistics.median(ordered), deciles[0], deciles[-1]


def _payloads(count: int) -> list[tuple[str, bytes]]:
    words = [
        "PDFs",
        "over",
        "ten",
        "megabytes",
        "reliably",
        "exhaust",
        "the",
        "ingester",
        "so",
        "split",
        "them",
        "first",
    ]
    payloads = []
    for index in range(count):
        belief_id = f"blf_bench{index:05d}"
        content = " ".join(words[(index + k) % len(words)] for k in range(40))
        payload = build_payload(
            belief_id=belief_id,
            agent_id="bench-agent",
            agent_name="Bench agent",
            content=content,
            provenance="clean",
            pending_count=index,
            token=f"tok_{index:040d}",
            ttl_seconds=3600,
        )
        payloads.append((belief_id, payload))
    return payloads


async def _fan_out(
    client: httpx.AsyncClient,
    subscriptions: list[Subscription],
    payloads: list[tuple[str, bytes]],
    keys: VapidKeys,
) -> float:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(index: int, belief_id: str, payload: bytes) -> Outcome:
        async with gate:
            result = await send(
                client,
                subscriptions[index % len(subscriptions)],
                payload,
                keys,
                SUBJECT,
                ttl=3600,
                topic=topic_for(belief_id),
                now=system_clock(),
            )
            return result.outcome

    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(one(index, belief_id, payload) for index, (belief_id, payload) in enumerate(payloads))
    )
    elapsed = time.perf_counter() - started
    failures = [outcome for outcome in outcomes if outcome is not Outcome.SENT]
    if failures:
        raise RuntimeError(f"{len(failures)} sends were not accepted: {set(failures)}")
    return elapsed


def _serve_fake(conn: Connection, server_key: str) -> None:
    # The push service is remote in production; a child process keeps its decryption and
    # signature checks from competing for this process's GIL, so the figure is the sender's.
    with FakePushService(expected_server_key=server_key) as fake:
        conn.send([fake.subscription(f"device{n}") for n in range(SUBSCRIPTIONS)])
        conn.recv()
        conn.send(len(fake.received()))


async def _throughput(keys: VapidKeys, subscriptions: list[Subscription]) -> list[float]:
    payloads = _payloads(NOTIFICATIONS)
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with push_client(EndpointPolicy(allowed=LOOPBACK), limits=limits) as client:
        await _fan_out(client, subscriptions, payloads[:40], keys)  # warm up connections
        return [
            NOTIFICATIONS / await _fan_out(client, subscriptions, payloads, keys)
            for _ in range(RUNS)
        ]


async def _seed_outbox(store: Store, subscriptions: list[Subscription], count: int) -> None:
    now = rfc3339(system_clock())
    expires = rfc3339(system_clock().replace(year=system_clock().year + 1))
    payloads = _payloads(count)

    async def work(conn) -> None:
        await conn.run(
            "INSERT INTO api_keys(id, key_hash, scope, created_at) VALUES (?, ?, 'admin', ?)",
            ("key_bench", new_id("h"), now),
        )
        ids = []
        for index, subscription in enumerate(subscriptions):
            ids.append(f"sub_bench{index:03d}")
            await conn.run(
                "INSERT INTO push_subscriptions(id, key_id, endpoint, p256dh, auth, created_at,"
                " last_seen_at) VALUES (?, 'key_bench', ?, ?, ?, ?, ?)",
                (ids[-1], subscription.endpoint, subscription.p256dh, subscription.auth, now, now),
            )
        # kind 'test' rows have no belief to re-check, so the worker sends every one of them.
        await conn.run_many(
            "INSERT INTO push_outbox(id, subscription_id, kind, payload, topic, urgency, ttl,"
            " created_at, expires_at, next_attempt_at)"
            " VALUES (?, ?, 'test', ?, ?, 'normal', 3600, ?, ?, ?)",
            [
                (new_id("msg"), ids[i % len(ids)], payload, topic_for(belief_id), now, expires, now)
                for i, (belief_id, payload) in enumerate(payloads)
            ],
        )

    await store.write(work)


async def _worker_throughput(keys: VapidKeys, subscriptions: list[Subscription]) -> list[float]:
    """The delivery worker end to end: lease, encrypt, sign, send, record each result."""
    rates = []
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with push_client(EndpointPolicy(allowed=LOOPBACK), limits=limits) as client:
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as data_dir:
                store = Store(Path(data_dir) / "bench.sqlite3")
                await store.open()
                try:
                    await _seed_outbox(store, subscriptions, NOTIFICATIONS)
                    worker = PushWorker(store, client, system_clock, keys, SUBJECT)
                    started = time.perf_counter()
                    await worker.start()
                    while worker.stats["sent"] < NOTIFICATIONS:
                        if sum(worker.stats.values()) > worker.stats["sent"]:
                            raise RuntimeError(f"worker sends failed: {dict(worker.stats)}")
                        await asyncio.sleep(0.002)
                    await worker.idle()
                    elapsed = time.perf_counter() - started
                    await worker.stop()
                    row = await store.fetchone(
                        "SELECT COUNT(*) AS n FROM push_outbox WHERE state = 'sent'"
                    )
                    if row["n"] != NOTIFICATIONS:
                        raise RuntimeError(f"only {row['n']} rows recorded as sent")
                finally:
                    await store.close()
            rates.append(NOTIFICATIONS / elapsed)
    return rates


def _micro(keys: VapidKeys, subscription: Subscription) -> tuple[list[float], list[float]]:
    payload = _payloads(1)[0][1]
    encrypt_ms, sign_ms = [], []
    for _ in range(RUNS):
        started = time.perf_counter()
        for _ in range(MICRO_ITERATIONS):
            encrypt(subscription, payload)
        encrypt_ms.append((time.perf_counter() - started) * 1000 / MICRO_ITERATIONS)
        started = time.perf_counter()
        for _ in range(MICRO_ITERATIONS):
            vapid_headers(keys, subscription.endpoint, SUBJECT, 3600, system_clock())
        sign_ms.append((time.perf_counter() - started) * 1000 / MICRO_ITERATIONS)
    return encrypt_ms, sign_ms


def _entry(name: str, unit: str, values: list[float], target: float, better: str) -> dict:
    median, p10, p90 = _quantiles(values)
    return {
        "name": name,
        "unit": unit,
        "median": round(median, 4),
        "p10": round(p10, 4),
        "p90": round(p90, 4),
        "runs": len(values),
        "target": target,
        "better": better,
    }


def measure() -> list[dict]:
    """Run the push benchmarks and return their figures."""
    keys = generate()
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    child = context.Process(target=_serve_fake, args=(theirs, keys.public_key_b64url))
    child.start()
    try:
        subscriptions = [parse_subscription(raw, LOOPBACK) for raw in ours.recv()]
        rates = asyncio.run(_throughput(keys, subscriptions))
        worker_rates = asyncio.run(_worker_throughput(keys, subscriptions))
        ours.send("stop")
        delivered = ours.recv()
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.terminate()
    expected = NOTIFICATIONS * RUNS * 2 + 40
    if delivered != expected:
        raise RuntimeError(f"the fake verified and decrypted {delivered} of {expected} messages")
    encrypt_ms, sign_ms = _micro(keys, subscriptions[0])
    return [
        _entry("web-push fan-out (encrypt+sign+send)", "per_s", rates, 300, "higher"),
        _entry(
            "web-push outbox worker (lease+encrypt+sign+send+record)",
            "per_s",
            worker_rates,
            300,
            "higher",
        ),
        _entry("web-push encrypt aes128gcm per message", "ms", encrypt_ms, 1.0, "lower"),
        _entry("web-push VAPID sign per message", "ms", sign_ms, 1.0, "lower"),
    ]


if __name__ == "__main__":
    for figure in measure():
        print(figure)
