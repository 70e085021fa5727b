"""The push store modules on both engines: subscriptions, channels and outbox claims."""

from __future__ import annotations

import json

import pytest

from credence.db import channels as channels_db
from credence.db import notices as notices_db
from credence.db import outbox as outbox_db
from credence.db import push as push_db
from credence.db.channels import Channel
from credence.db.engine import Database
from credence.db.push import NewSubscription
from credence.errors import Conflict, NotFound
from credence.ids import new_id
from credence.models.reasons import Reason
from tests.notify.rows import (
    insert_agent,
    insert_key,
    insert_pending_belief,
    insert_subscription,
)

NOW = "2026-03-01T12:00:00.000Z"


def _sub(key_id: str, endpoint: str, p256dh: str = "p") -> NewSubscription:
    return NewSubscription(key_id, endpoint, p256dh, "a", None)


async def test_subscriptions_upsert_by_endpoint_stay_with_their_key_and_are_capped(
    store: Database,
):
    alice = await store.write(lambda conn: insert_key(conn, "reviewer", None, NOW))
    bob = await store.write(lambda conn: insert_key(conn, "reviewer", ["coder"], NOW))
    endpoint = "https://push.example-push.org/1"

    async def upsert(new: NewSubscription, now: str = NOW, keep: int = 3):
        sub_id = new_id("sub")
        return await store.write(
            lambda conn: push_db.upsert_subscription(
                conn, new, subscription_id=sub_id, now=now, keep=keep
            )
        )

    created, row = await upsert(_sub(alice, endpoint))
    assert created and row.key_id == alice
    again, same = await upsert(_sub(alice, endpoint, "p2"), "2026-03-01T12:00:01.000Z")
    assert not again and same.id == row.id and same.p256dh == "p2"
    with pytest.raises(Conflict):
        await upsert(_sub(bob, endpoint))
    for n in range(2, 6):
        await upsert(_sub(alice, f"https://push.example-push.org/{n}"), f"2026-03-01T12:00:0{n}Z")
    mine = await store.read(lambda conn: push_db.subscriptions_of_key(conn, alice))
    assert [r.endpoint[-1] for r in mine] == ["5", "4", "3"]
    assert not await store.write(lambda conn: push_db.delete_subscription(conn, mine[0].id, bob))
    assert await store.write(lambda conn: push_db.delete_subscription(conn, mine[0].id, alice))
    assert await store.write(lambda conn: push_db.delete_subscription(conn, mine[1].id, None))


async def test_subscribers_and_channels_follow_the_keys_agent_lists(store: Database):
    async def setup(conn):
        await insert_agent(conn, "coder", "Coder", NOW)
        await insert_agent(conn, "writer", "Writer", NOW)
        keys = {
            "admin": await insert_key(conn, "admin", None, NOW),
            "coder": await insert_key(conn, "reviewer", ["coder"], NOW),
            "writer": await insert_key(conn, "reviewer", ["writer"], NOW),
            "revoked": await insert_key(conn, "reviewer", None, NOW, revoked=True),
        }
        for name, key_id in keys.items():
            await conn.run(
                "INSERT INTO push_subscriptions(id, key_id, endpoint, p256dh, auth, created_at,"
                " last_seen_at) VALUES (?, ?, ?, 'p', 'a', ?, ?)",
                (new_id("sub"), key_id, f"https://push.example-push.org/{name}", NOW, NOW),
            )
        return keys

    keys = await store.write(setup)
    found = await store.read(lambda conn: push_db.subscribers(conn, "coder"))
    assert {r.key_id for r in found} == {keys["admin"], keys["coder"]}

    def channel(url: str, agents: list[str] | None) -> Channel:
        return Channel(
            id=new_id("chn"),
            source="admin",
            url=url,
            url_hash=url,
            masked_url="json://…",
            label="",
            agents=agents,
            created_at=NOW,
        )

    everyone = await store.write(lambda conn: channels_db.create_channel(conn, channel("a", None)))
    coder = await store.write(
        lambda conn: channels_db.create_channel(conn, channel("b", ["coder"]))
    )
    await store.write(lambda conn: channels_db.create_channel(conn, channel("c", ["writer"])))
    ids = await store.read(lambda conn: channels_db.channels_for_agent(conn, "coder"))
    assert sorted(ids) == sorted([everyone.id, coder.id])
    with pytest.raises(Conflict):
        await store.write(lambda conn: channels_db.create_channel(conn, channel("a", None)))
    with pytest.raises(NotFound):
        await store.write(lambda conn: channels_db.create_channel(conn, channel("d", ["nobody"])))
    await store.write(lambda conn: channels_db.delete_admin_channel(conn, everyone.id))
    with pytest.raises(NotFound):
        await store.write(lambda conn: channels_db.delete_admin_channel(conn, everyone.id))
    assert await store.read(lambda conn: outbox_db.pending_count(conn, ["coder"])) == 0
    assert await store.read(lambda conn: outbox_db.next_due(conn, "push_outbox")) is None


async def test_an_env_channel_cannot_be_deleted_through_the_api(store: Database):
    url = "json://127.0.0.1:9/env"
    env = Channel(
        id=new_id("chn"),
        source="env",
        url=url,
        url_hash="h",
        masked_url="json://…",
        label="CREDENCE_APPRISE_URLS",
        agents=None,
        created_at=NOW,
    )
    await store.write(lambda conn: channels_db.sync_env_channels(conn, {"h": env}))
    await store.write(lambda conn: channels_db.sync_env_channels(conn, {"h": env}))
    [row] = await store.read(channels_db.list_channels)
    with pytest.raises(Conflict):
        await store.write(lambda conn: channels_db.delete_admin_channel(conn, row.id))


async def test_ledger_reads_are_records_with_review_reasons_decoded(store: Database):
    async def work(conn):
        await insert_agent(conn, "coder", "Coder", NOW)
        key_id = await insert_key(conn, "reviewer", ["coder"], NOW)
        await conn.run(
            "INSERT INTO reviewers(id, name, created_at) VALUES ('rvw_1', '', ?)", (NOW,)
        )
        await conn.run("UPDATE api_keys SET reviewer_id = 'rvw_1' WHERE id = ?", (key_id,))
        await insert_subscription(conn, key_id, "https://push.example-push.org/9", "p", "a", NOW)
        belief = await insert_pending_belief(conn, "coder", "Use bun", NOW)
        await conn.run(
            "UPDATE beliefs SET review_reasons = ? WHERE id = ?",
            (json.dumps(["contradicts:b_old", "untrusted_source"]), belief.id),
        )
        await notices_db.insert(conn, [("rvw_1", belief.id, "coder", 1, "high", 0, None, NOW)])
        return key_id, belief.id

    key_id, belief_id = await store.write(work)
    reasons = [Reason("contradicts", "b_old"), Reason("untrusted_source")]
    [item] = await store.read(lambda conn: notices_db.items(conn, "rvw_1"))
    assert item.belief_id == belief_id and item.review_reasons == reasons
    assert item.agent_name == "Coder" and item.urgency == "high" and not item.escalation
    [sub] = await store.read(lambda conn: notices_db.reviewer_subscriptions(conn, "rvw_1"))
    assert sub.key_id == key_id and sub.scope == "reviewer" and sub.agents == ["coder"]
    await store.write(lambda conn: notices_db.wake(conn, "rvw_1", NOW))
    schedule = await store.write(lambda conn: notices_db.lock_schedule(conn, "rvw_1"))
    assert schedule is not None and schedule.due_at == NOW and schedule.last_push_at is None
