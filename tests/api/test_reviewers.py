"""Reviewers are people: names, devices joined by pairing, routing per agent, the settings API."""

from __future__ import annotations

import json
import time

from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import cli_key


def pair(server, admin, **body) -> str:
    """A reviewer key through a pairing code (as a phone gets one)."""
    code = admin.post("/api/v1/pairing-codes", json=body).json()["code"]
    with server.client() as anonymous:
        response = anonymous.post("/api/v1/pair", json={"code": code})
    assert response.status_code in (200, 201), response.text
    return response.json()["key"]


def test_a_second_device_joins_its_reviewer_and_history_names_both(server, admin) -> None:
    make_agent(admin)
    phone = pair(server, admin, label="Ana's phone")
    with server.client(phone) as client:
        me = client.get("/api/v1/me").json()
        assert me["reviewer_id"] and me["reviewer_name"] == ""
        renamed = client.patch("/api/v1/me", json={"name": "  Ana  Lima "})
        assert renamed.status_code == 200 and renamed.json()["reviewer_name"] == "Ana Lima"
        blank = client.patch("/api/v1/me", json={"name": "   "})
        assert blank.status_code == 400 and "name" in blank.text
        assert client.patch("/api/v1/me", json={"name": "Ana\x00"}).status_code == 400
        assert client.get("/api/v1/me").json()["reviewer_name"] == "Ana Lima"
    laptop = pair(server, admin, label="Ana's laptop", reviewer_id=me["reviewer_id"])
    kept, forgotten = pending_belief(admin, text="Use bun"), pending_belief(admin, text="Fridays")
    with server.client(phone) as client:
        assert decide(client, kept, "keep").status_code == 200
    with server.client(laptop) as client:
        assert client.get("/api/v1/me").json()["reviewer_id"] == me["reviewer_id"]
        assert decide(client, forgotten, "forget", {"reason": "no"}).status_code == 200
        feed = client.get("/api/v1/audit").json()["items"]
    assert [(e["reviewer_name"], e["device"]) for e in feed] == [
        ("Ana Lima", "Ana's laptop"),
        ("Ana Lima", "Ana's phone"),
    ]
    assert feed[0]["actor_label"] == "Ana Lima (Ana's laptop)"
    trail = admin.get(f"/api/v1/beliefs/{kept['id']}/audit").json()["items"]
    assert trail[-1]["reviewer_id"] == me["reviewer_id"]
    listed = {r["id"]: r for r in admin.get("/api/v1/reviewers").json()["items"]}
    assert [d["label"] for d in listed[me["reviewer_id"]]["devices"]] == [
        "Ana's phone",
        "Ana's laptop",
    ]
    missing = admin.post("/api/v1/pairing-codes", json={"reviewer_id": "rvw_nobody"})
    assert missing.status_code == 404


def test_admins_route_agents_to_reviewers_within_their_scope(server, admin) -> None:
    make_agent(admin)
    make_agent(admin, "other")
    everyone = cli_key(server.settings, "reviewer", label="all agents")
    coder_only = cli_key(server.settings, "reviewer", "coder", label="coder only")
    ids = {}
    for key in (everyone, coder_only):
        with server.client(key) as client:
            ids[key] = client.get("/api/v1/me").json()["reviewer_id"]

    def reviewers(agent: str) -> dict[str, tuple[bool, str]]:
        items = admin.get(f"/api/v1/agents/{agent}/reviewers").json()["items"]
        return {r["id"]: (r["reviews"], r["assignment"]) for r in items}

    assert reviewers("coder") == {
        ids[everyone]: (True, "default"),
        ids[coder_only]: (True, "default"),
    }
    assert reviewers("other") == {ids[everyone]: (True, "default")}
    gone = admin.delete(f"/api/v1/agents/coder/reviewers/{ids[everyone]}")
    assert gone.status_code == 200
    assert reviewers("coder")[ids[everyone]] == (False, "unassigned")
    back = admin.put(f"/api/v1/agents/coder/reviewers/{ids[everyone]}")
    assert back.status_code == 200
    assert reviewers("coder")[ids[everyone]] == (True, "assigned")
    # A reviewer whose keys cannot see the agent is refused, naming the field; nothing saved.
    refused = admin.put(f"/api/v1/agents/other/reviewers/{ids[coder_only]}")
    assert refused.status_code == 422 and "reviewer_id" in refused.json()["detail"]
    assert reviewers("other") == {ids[everyone]: (True, "default")}
    nobody = "rvw_" + "0" * 26
    assert admin.put(f"/api/v1/agents/other/reviewers/{nobody}").status_code == 404
    with server.client(coder_only) as client:
        assert client.get("/api/v1/agents/other/reviewers").status_code == 404
        assert client.put(f"/api/v1/agents/coder/reviewers/{ids[coder_only]}").status_code == 403


def test_notification_settings_are_checked_and_saved_whole(server, admin) -> None:
    phone = cli_key(server.settings, "reviewer", label="phone")
    with server.client(phone) as client:
        defaults = client.get("/api/v1/me/notifications").json()
        assert defaults == {
            "mode": "digest",
            "quiet_hours": None,
            "remind_after_hours": 24,
            "snooze_until": None,
            "digest_spacing_minutes": 720,
            "weekly_report": {"enabled": True, "weekday": "monday", "hour": 9},
        }
        wanted = {
            "mode": "each",
            "quiet_hours": {
                "start": "22:00",
                "end": "07:00",
                "time_zone": "Europe/Berlin",
                "allow_high": True,
            },
            "remind_after_hours": 8,
            "snooze_until": "2026-12-24T18:00:00Z",
            "digest_spacing_minutes": 60,
            "weekly_report": {"enabled": True, "weekday": "friday", "hour": 16},
        }
        saved = client.put("/api/v1/me/notifications", json=wanted)
        assert saved.status_code == 200 and saved.json() == wanted
        bad = [
            ({"quiet_hours": {**wanted["quiet_hours"], "time_zone": "Mars/Base"}}, "time_zone"),
            ({"quiet_hours": {**wanted["quiet_hours"], "end": "22:00"}}, "quiet_hours.end"),
            ({"remind_after_hours": 0}, "remind_after_hours"),
            ({"digest_spacing_minutes": 1441}, "digest_spacing_minutes"),
            ({"weekly_report": {"enabled": True, "weekday": "friday", "hour": 24}}, "hour"),
        ]
        for change, field in bad:
            refused = client.put("/api/v1/me/notifications", json={**wanted, **change})
            assert refused.status_code == 422, refused.text
            assert field in refused.json()["detail"]
        assert client.get("/api/v1/me/notifications").json() == wanted
        off = client.put("/api/v1/me/notifications", json={**wanted, "quiet_hours": None})
        assert off.json()["quiet_hours"] is None
        no_weekly = {"enabled": False, "weekday": "friday", "hour": 16}
        quiet = client.put("/api/v1/me/notifications", json={**wanted, "weekly_report": no_weekly})
        assert quiet.json()["weekly_report"] == no_weekly
        odd_day = {**wanted, "weekly_report": {**no_weekly, "weekday": "someday"}}
        refused = client.put("/api/v1/me/notifications", json=odd_day)
        assert refused.status_code in (400, 422) and "weekday" in refused.text
        assert client.get("/api/v1/me/notifications").json()["weekly_report"] == no_weekly
    make_agent(admin)
    with server.client(cli_key(server.settings, "agent", "coder", label="agent")) as agent:
        assert agent.get("/api/v1/me/notifications").status_code == 403


def test_the_cli_lists_assigns_and_unassigns(server, admin, capsys) -> None:
    from credence.cli import main
    from tests.livesrv import store_flags

    make_agent(admin)
    key = cli_key(server.settings, "reviewer", "coder", label="Bo's phone")
    with server.client(key) as client:
        reviewer_id = client.get("/api/v1/me").json()["reviewer_id"]
    flags = store_flags(server.settings)
    capsys.readouterr()
    assert main(["reviewers", "list", *flags]) == 0
    assert f"{reviewer_id}  (no name)  Bo's phone" in capsys.readouterr().out
    assert main(["reviewers", "unassign", "coder", reviewer_id, *flags]) == 0
    items = admin.get("/api/v1/agents/coder/reviewers").json()["items"]
    assert [(r["id"], r["reviews"]) for r in items] == [(reviewer_id, False)]
    make_agent(admin, "other")
    assert main(["reviewers", "assign", "other", reviewer_id, *flags]) == 2
    assert "reviewer_id" in capsys.readouterr().err


def test_an_apprise_channel_follows_its_own_policy_and_gets_one_digest(server, admin) -> None:
    from harness.fakes.webhook import Webhook

    make_agent(admin)
    reviewer = cli_key(server.settings, "reviewer", "coder", label="phone")
    with Webhook() as hook:
        created = admin.post("/api/v1/push/channels", json={"url": hook.url, "agents": ["coder"]})
        assert created.status_code == 201, created.text
        path = f"/api/v1/push/channels/{created.json()['id']}/notifications"
        assert admin.get(path).json()["mode"] == "digest"
        zone = {"start": "22:00", "end": "07:00", "time_zone": "Nowhere/Land"}
        refused = admin.put(path, json={"mode": "each", "quiet_hours": zone})
        assert refused.status_code == 422 and "quiet_hours.time_zone" in refused.json()["detail"]
        assert admin.get(path).json()["mode"] == "digest"
        with server.client(reviewer) as phone:
            assert phone.get(path).status_code == 403
        missing = admin.get("/api/v1/push/channels/chn_01jq3z7k9m2n4p6r8s0t1v3w5x/notifications")
        assert missing.status_code == 404
        answer = admin.post(
            "/api/v1/agents/coder/memory/beliefs/proposals",
            json={
                "proposals": [
                    {"op": "add", "belief": text, "confidence": 0.7}
                    for text in ("Split PDFs over 10MB", "Staging resets on Sundays")
                ]
            },
        )
        assert answer.status_code == 200, answer.text
        deadline = time.monotonic() + 10
        while not hook.received() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        [message] = hook.received()
        assert "2 new beliefs from Coder" in json.dumps(message)
