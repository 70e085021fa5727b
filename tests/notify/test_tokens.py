"""Push action tokens: one belief, one version, one key, until the TTL; forged ones fail."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from credence.db import make_store
from credence.notify import tokens

BELIEF = "b_01jq3z7k9m2n4p6r8s0t1v3w5x"
KEY = "key_01jq3z7k9m2n4p6r8s0t1v3w5y"
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def secret() -> bytes:
    return secrets.token_bytes(32)


def _issue(secret: bytes, **overrides) -> str:
    fields = {
        "belief_id": BELIEF,
        "version": 1,
        "key_id": KEY,
        "expires_at": NOW + timedelta(days=7),
        **overrides,
    }
    return tokens.issue(secret, **fields)


def test_a_token_verifies_to_exactly_what_it_was_issued_for(secret: bytes):
    token = _issue(secret, version=3)
    claims = tokens.verify(secret, token, NOW)
    assert (claims.belief_id, claims.version, claims.key_id) == (BELIEF, 3, KEY)
    assert claims.expires_at == int((NOW + timedelta(days=7)).timestamp())
    assert len(token) <= tokens.MAX_TOKEN_LENGTH


def test_tokens_are_unique_per_issue(secret: bytes):
    first, second = _issue(secret), _issue(secret)
    assert first != second
    assert tokens.verify(secret, first, NOW).nonce != tokens.verify(secret, second, NOW).nonce
    assert tokens.idempotency_key(first, "keep") != tokens.idempotency_key(second, "keep")
    assert tokens.idempotency_key(first, "keep") == tokens.idempotency_key(first, "keep")
    assert tokens.idempotency_key(first, "keep") != tokens.idempotency_key(first, "forget")


def test_a_token_expires_with_the_ttl(secret: bytes):
    token = _issue(secret, expires_at=NOW + timedelta(seconds=60))
    tokens.verify(secret, token, NOW + timedelta(seconds=59))
    with pytest.raises(tokens.TokenError, match="expired"):
        tokens.verify(secret, token, NOW + timedelta(seconds=60))


@pytest.mark.parametrize(
    "field, replacement",
    [
        (1, "b_01jq3z7k9m2n4p6r8s0t1v3w5z"),  # another belief
        (2, "2"),  # another version
        (3, "key_01jq3z7k9m2n4p6r8s0t1v3w5z"),  # another key
        (4, "9999999999"),  # a later expiry
    ],
)
def test_changing_any_signed_field_breaks_the_mac(secret: bytes, field: int, replacement: str):
    parts = _issue(secret).split(".")
    parts[field] = replacement
    with pytest.raises(tokens.TokenError, match="not valid"):
        tokens.verify(secret, ".".join(parts), NOW)


def test_another_secret_does_not_verify(secret: bytes):
    other = secrets.token_bytes(32)
    assert other != secret
    with pytest.raises(tokens.TokenError, match="not valid"):
        tokens.verify(other, _issue(secret), NOW)


@pytest.mark.parametrize(
    "token",
    ["", "v1", "v2." + "a" * 100, "x" * 300, "v1.b_1.1.key_1.1.aaaa.bbbb", "v1\x00", "🙂" * 10],
)
def test_malformed_tokens_are_refused(secret: bytes, token: str):
    with pytest.raises(tokens.TokenError, match="malformed"):
        tokens.verify(secret, token, NOW)


def test_a_flipped_mac_character_is_refused(secret: bytes):
    token = _issue(secret)
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    with pytest.raises(tokens.TokenError):
        tokens.verify(secret, flipped, NOW)


async def test_the_secret_is_made_once_in_the_database_and_reused(
    tmp_path: Path, database_url: str | None
):
    data = tmp_path / "data"
    first_store = make_store(database_url, data / "credence.sqlite3")
    await first_store.open()
    first = first_store.secret(tokens.SECRET_NAME)
    await first_store.close()
    again = make_store(database_url, data / "credence.sqlite3")
    await again.open()
    try:
        assert again.secret(tokens.SECRET_NAME) == first and len(first) == 32
    finally:
        await again.close()
    assert not (data / tokens.SECRET_FILENAME).exists()
    token = _issue(first)
    assert tokens.verify(first, token, NOW).key_id == KEY


async def test_an_older_installs_secret_file_is_adopted_so_its_buttons_keep_working(
    tmp_path: Path,
):
    data = tmp_path / "data"
    data.mkdir()
    legacy = secrets.token_bytes(32)
    (data / tokens.SECRET_FILENAME).write_bytes(legacy)
    token = _issue(legacy)
    store = make_store(None, data / "credence.sqlite3")
    await store.open()
    try:
        assert tokens.verify(store.secret(tokens.SECRET_NAME), token, NOW).belief_id == BELIEF
    finally:
        await store.close()


def test_ids_that_do_not_fit_the_grammar_cannot_be_issued(secret: bytes):
    with pytest.raises(ValueError):
        _issue(secret, belief_id="b.1")
    with pytest.raises(ValueError):
        _issue(secret, expires_at=datetime(2025, 1, 1))  # naive
