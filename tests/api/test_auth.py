"""Authentication and scopes: hashed keys, 401/403/404 rules, revocation, pairing."""

from __future__ import annotations

import hashlib
import sqlite3

import psycopg

from credence.settings import Settings
from tests.helpers import decide, make_agent, pending_belief, post_episode
from tests.livesrv import cli_key


def test_requests_without_a_valid_key_get_401(server, admin) -> None:
    with server.client() as anonymous:
        response = anonymous.get("/api/v1/agents")
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert (
            anonymous.get(
                "/api/v1/agents", headers={"Authorization": "Bearer crd_nope"}
            ).status_code
            == 401
        )
        assert (
            anonymous.get("/api/v1/agents", headers={"Authorization": "Basic abc"}).status_code
            == 401
        )
        assert anonymous.get("/healthz").status_code == 200


def _dump(settings: Settings) -> str:
    """Every row of every table, as text."""
    if settings.database_url is None:
        db = sqlite3.connect(settings.database_path)
        try:
            return "\n".join(db.iterdump())
        finally:
            db.close()
    with psycopg.connect(settings.database_url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
        return "\n".join(
            str(row[0])
            for (table,) in tables
            for row in conn.execute(f'SELECT row_to_json(t)::text FROM "{table}" t').fetchall()
        )


def test_keys_are_stored_only_as_hashes(server, admin_key) -> None:
    dump = _dump(server.settings)
    assert hashlib.sha256(admin_key.encode()).hexdigest() in dump  # the dump covers api_keys
    assert admin_key not in dump
    assert admin_key[4:20] not in dump


def test_agent_key_posts_episodes_but_never_decides(server, admin) -> None:
    make_agent(admin, "coder")
    make_agent(admin, "other")
    belief = pending_belief(admin)
    key = cli_key(server.settings, "agent", "coder")
    with server.client(key) as agent:
        post_episode(agent, "coder")
        assert (
            agent.post(
                "/api/v1/agents/other/episodes", json={"session_id": "s", "summary": "x"}
            ).status_code
            == 404
        )
        for action in ("keep", "forget", "reopen"):
            assert decide(agent, belief, action).status_code == 403
        assert decide(agent, belief, "edit", {"content": "mine"}).status_code == 403
        assert agent.get("/api/v1/keys").status_code == 403
    assert admin.get(f"/api/v1/beliefs/{belief['id']}").json()["status"] == "pending"


def test_reviewer_of_a_gets_404_for_every_object_of_b(server, admin) -> None:
    make_agent(admin, "alpha")
    make_agent(admin, "beta")
    belief_b = pending_belief(admin, "beta")
    episode_b = post_episode(admin, "beta")
    key = cli_key(server.settings, "reviewer", "alpha")
    with server.client(key) as reviewer:
        assert reviewer.get(f"/api/v1/beliefs/{belief_b['id']}").status_code == 404
        assert reviewer.get(f"/api/v1/beliefs/{belief_b['id']}/audit").status_code == 404
        assert decide(reviewer, belief_b, "keep").status_code == 404
        assert reviewer.get("/api/v1/agents/beta/episodes").status_code == 404
        assert reviewer.get("/api/v1/agents/beta/memory/beliefs").status_code == 404
        listed = reviewer.get("/api/v1/beliefs", params={"agent_id": "beta"}).json()
        assert listed["items"] == []
        assert episode_b["id"] not in reviewer.get("/api/v1/beliefs").text


def test_admin_creates_and_revokes_keys_through_the_api(server, admin) -> None:
    make_agent(admin, "coder")
    created = admin.post(
        "/api/v1/keys", json={"scope": "reviewer", "agents": ["coder"], "label": "phone"}
    )
    assert created.status_code == 201
    secret, info = created.json()["key"], created.json()["info"]
    assert secret.startswith("crd_") and len(secret) == 47
    with server.client(secret) as reviewer:
        me = reviewer.get("/api/v1/me").json()
        assert me == {
            "key_id": info["id"],
            "scope": "reviewer",
            "agents": ["coder"],
            "label": "phone",
            "reviewer_id": me["reviewer_id"],
            "reviewer_name": "",
            "may_write": False,
        }
        assert me["reviewer_id"].startswith("rvw_")
        assert admin.post(f"/api/v1/keys/{info['id']}/revoke").json()["revoked_at"]
        assert reviewer.get("/api/v1/me").status_code == 401
    listed = admin.get("/api/v1/keys").json()["items"]
    assert secret not in str(listed) and any(k["id"] == info["id"] for k in listed)
    assert admin.post("/api/v1/keys", json={"scope": "agent"}).status_code == 422
    assert (
        admin.post("/api/v1/keys", json={"scope": "reviewer", "agents": ["ghost"]}).status_code
        == 404
    )


def test_pairing_code_exchanges_once_for_a_reviewer_key(server, admin) -> None:
    make_agent(admin, "coder")
    code = admin.post("/api/v1/pairing-codes", json={"agents": ["coder"]}).json()
    assert code["url"].endswith(f"/?pair={code['code']}")
    with server.client() as phone:
        paired = phone.post("/api/v1/pair", json={"code": code["code"]})
        assert paired.status_code == 201
        assert paired.json()["info"]["scope"] == "reviewer"
        assert paired.json()["info"]["agents"] == ["coder"]
        again = phone.post("/api/v1/pair", json={"code": code["code"]})
        assert again.status_code == 410 and "already used" in again.json()["detail"]
        unknown = phone.post("/api/v1/pair", json={"code": "not-a-real-code"})
        assert unknown.status_code == 410 and "not valid" in unknown.json()["detail"]
        with server.client(paired.json()["key"]) as reviewer:
            assert reviewer.get("/api/v1/agents/coder").status_code == 200


def test_error_responses_carry_the_security_headers(server, admin) -> None:
    with server.client() as anonymous:
        for response in (
            anonymous.get("/api/v1/agents"),
            admin.get("/api/v1/agents/ghost"),
            anonymous.get("/healthz"),
        ):
            assert response.headers["x-content-type-options"] == "nosniff"
            assert "default-src 'self'" in response.headers["content-security-policy"]
        assert anonymous.get("/api/v1/agents").headers["cache-control"] == "no-store"


def test_access_domain_code_never_imports_the_web_framework() -> None:
    """Keys, principals, pairing and limits raise domain errors; only api/ knows Litestar."""
    import ast
    from pathlib import Path

    import credence

    root = Path(credence.__file__).parent
    domain = [*sorted((root / "access").glob("*.py")), root / "ratelimit.py"]
    stores = ("agents.py", "keys.py", "state.py", "idempotency.py", "ratelimits.py")
    domain += [root / "db" / name for name in stores]
    for path in domain:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(name.split(".")[0] == "litestar" for name in names), path
