"""The secret shapes the third review found stored verbatim are redacted (rules written after
gitleaks' and detect-secrets' as reference), and their look-alikes survive untouched."""

from __future__ import annotations

import base64

import pytest

from credence.memory.ingest.episodes import prepare
from credence.memory.ingest.redact import redact
from credence.models import EpisodeIn

KEY = b"k" * 32
# (text, the secret that must be gone, the rule that takes it)
TRUE_POSITIVES = [
    ("the admin password is hunter2x9", "hunter2x9", "prose_password"),
    ("Password was: Tr0ub4dor&3 yesterday", "Tr0ub4dor&3", "prose_password"),
    ("mysql -u root -pS3cretPw9 shop", "S3cretPw9", "cli_password_glued"),
    ("psql --password Tr0ub4dor3x -h db", "Tr0ub4dor3x", "cli_password"),
    ("deploy --password=Sup3rSecret!", "Sup3rSecret!", "generic_secret"),
    ("curl -u alice:s3cr3tPass https://api.example.com", "s3cr3tPass", "cli_user_password"),
    (
        "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_key_pair",
    ),
    (
        "AKIAIOSFODNN7EXAMPLE\nwJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_key_pair",
    ),
    (
        "https://acct.blob.core.windows.net/c?sv=2020-08-04&sig=abcdEFGH1234abcdEFGH1234abcdEFGH12%3D",
        "abcdEFGH1234abcdEFGH1234abcdEFGH12",
        "azure_sas_signature",
    ),
    ("token ya29.a0AfH6SMBx1234567890abcdefghijklmn", "ya29.a0AfH6SMBx", "google_oauth_token"),
    (
        "refresh 1//0gAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "0gAbCdEfGhIjKlMnOpQrStUvWxYz",
        "google_oauth_token",
    ),
    (
        "bot MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123",
        "MTIzNDU2Nzg5MDEyMzQ1Njc4",
        "discord_bot_token",
    ),
    ("Cookie: sessionid=38afes7a8a9b0c1d2e3f", "38afes7a8a9b0c1d2e3f", "session_cookie"),
    ("Set-Cookie: sid=abcdef123456; Path=/; HttpOnly", "abcdef123456", "session_cookie"),
    (
        "echo " + base64.b64encode(b"password=Sup3rS3cret!x").decode() + " | base64 -d",
        base64.b64encode(b"password=Sup3rS3cret!x").decode(),
        "base64_secret",
    ),
]
LOOK_ALIKES = [
    "gcc -pthread -O2 main.c",
    "mkdir -p build/output && cp -pr a b",
    "the password is stored in the vault",
    "the password is correct, said the user",
    "curl -u admin https://api.example.com",
    "I ate a cookie: chocolate chip",
    "see https://example.com/?page=2&sort=asc&signature=none",
    "ssh -p 2222 host",
    "version v1.2.3.4 released; build 2026.01.02.3",
    "the AKIA prefix marks an access key id, see docs",
    "img " + base64.b64encode(b"just some ordinary text here ok").decode(),
    "the commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "name.surname.something_long_enough_here.v2",
]


@pytest.mark.parametrize(("text", "secret", "rule"), TRUE_POSITIVES)
def test_each_shape_is_redacted(text: str, secret: str, rule: str) -> None:
    result = redact(text, digest_key=KEY)
    assert secret not in result.text, result.text
    assert rule in result.rules
    assert redact(result.text, digest_key=KEY).count == 0  # and redacting again finds nothing


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_survive(text: str) -> None:
    assert redact(text, digest_key=KEY).text == text


def test_role_label_is_redacted() -> None:
    episode = EpisodeIn(
        session_id="s", summary="did a thing", role_label="ops --password=Sup3rSecret!"
    )
    row, count = prepare(episode, "coder", "2026-01-01T00:00:00.000000Z", 0, KEY)
    assert "Sup3rSecret!" not in row["role_label"] and count == 1
