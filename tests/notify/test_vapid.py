"""VAPID keys are created once and never rotated; subjects must be real; headers verify."""

from __future__ import annotations

import base64
import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02
from py_vapid.jwt import decode as decode_jwt

from credence.db.engine import Database
from credence.notify.runtime import load_vapid_keys
from credence.notify.vapid import (
    VAPID_KEY_FILENAME,
    audience_for,
    generate,
    parse_private_key,
    supplied_keys,
    validate_subject,
    vapid_headers,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SUBJECT = "mailto:reviewer@credence-push.org"


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _public_b64(key: ec.EllipticCurvePrivateKey) -> str:
    point = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(point).rstrip(b"=").decode()


def _pem(key: ec.EllipticCurvePrivateKey, private_format=serialization.PrivateFormat.PKCS8) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, private_format, serialization.NoEncryption()
    ).decode()


async def test_first_start_generates_a_key_in_the_database_and_writes_no_file(
    store: Database, tmp_path: Path
):
    data = tmp_path / "data"
    keys = await load_vapid_keys(store, data, None)
    assert keys.source == "generated"
    assert not (data / VAPID_KEY_FILENAME).exists()
    again = await load_vapid_keys(store, data, None)
    assert again.source == "database"
    assert again.public_key_b64url == keys.public_key_b64url


def test_public_key_is_the_unpadded_base64url_uncompressed_point():
    keys = generate()
    assert "=" not in keys.public_key_b64url
    assert set(keys.public_key_b64url) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )
    point = _unb64url(keys.public_key_b64url)
    assert len(point) == 65 and point[0] == 0x04
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    assert public.public_numbers() == keys.private_key.public_key().public_numbers()


async def test_an_older_installs_key_file_is_adopted_once_and_left_untouched(
    store: Database, tmp_path: Path
):
    data = tmp_path / "data"
    source = ec.generate_private_key(ec.SECP256R1())
    key_file = data / VAPID_KEY_FILENAME
    key_file.write_text(_pem(source))
    before = (key_file.read_bytes(), key_file.stat().st_mtime_ns)
    keys = await load_vapid_keys(store, data, None)
    assert keys.source == "file" and keys.public_key_b64url == _public_b64(source)
    key_file.unlink()  # adopted: the database has it now
    again = await load_vapid_keys(store, data, None)
    assert again.public_key_b64url == _public_b64(source)
    assert before[0] == _pem(source).encode()


async def test_an_unreadable_key_file_is_refused_and_left_untouched(
    store: Database, tmp_path: Path
):
    key_file = tmp_path / "data" / VAPID_KEY_FILENAME
    key_file.write_text("not a key\n")
    with pytest.raises(ValueError, match="refusing to replace"):
        await load_vapid_keys(store, tmp_path / "data", None)
    assert key_file.read_text() == "not a key\n"


async def test_a_key_file_on_another_curve_is_refused(store: Database, tmp_path: Path):
    other = ec.generate_private_key(ec.SECP384R1())
    (tmp_path / "data" / VAPID_KEY_FILENAME).write_text(_pem(other))
    with pytest.raises(ValueError, match="P-256"):
        await load_vapid_keys(store, tmp_path / "data", None)


@pytest.mark.parametrize("key_format", ["pkcs8", "sec1"])
async def test_a_supplied_pem_key_is_used_and_nothing_is_stored(
    store: Database, tmp_path: Path, key_format: str
):
    source = ec.generate_private_key(ec.SECP256R1())
    private_format = {
        "pkcs8": serialization.PrivateFormat.PKCS8,
        "sec1": serialization.PrivateFormat.TraditionalOpenSSL,
    }[key_format]
    keys = await load_vapid_keys(store, tmp_path / "data", _pem(source, private_format))
    assert keys.source == "setting"
    assert keys.public_key_b64url == _public_b64(source)
    assert not (tmp_path / "data" / VAPID_KEY_FILENAME).exists()
    assert (await load_vapid_keys(store, tmp_path / "data", None)).source == "generated"


def test_a_supplied_pem_with_escaped_newlines_is_accepted():
    source = ec.generate_private_key(ec.SECP256R1())
    keys = supplied_keys(_pem(source).strip().replace("\n", "\\n"))
    assert keys is not None and keys.public_key_b64url == _public_b64(source)


def test_a_supplied_raw_base64url_scalar_is_accepted():
    source = ec.generate_private_key(ec.SECP256R1())
    raw = source.private_numbers().private_value.to_bytes(32, "big")
    keys = supplied_keys(base64.urlsafe_b64encode(raw).rstrip(b"=").decode())
    assert keys is not None and keys.public_key_b64url == _public_b64(source)


def test_a_key_exported_by_py_vapid_round_trips():
    vapid = Vapid02()
    vapid.generate_keys()
    keys = supplied_keys(vapid.private_pem().decode())
    assert keys is not None and keys.public_key_b64url == _public_b64(vapid.private_key)


@pytest.mark.parametrize(
    "supplied",
    ["garbage!", base64.urlsafe_b64encode(b"\x00" * 32).decode(), "-----BEGIN PRIVATE KEY-----x"],
)
def test_a_bad_supplied_key_names_the_setting(supplied: str):
    with pytest.raises(ValueError, match="CREDENCE_VAPID_PRIVATE_KEY"):
        supplied_keys(supplied)


async def test_a_blank_setting_falls_back_to_the_stored_key(store: Database, tmp_path: Path):
    first = await load_vapid_keys(store, tmp_path / "data", None)
    blank = await load_vapid_keys(store, tmp_path / "data", "  ")
    assert blank.public_key_b64url == first.public_key_b64url


async def test_a_supplied_key_that_differs_from_an_old_key_file_is_warned_about(
    store: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    (tmp_path / "data" / VAPID_KEY_FILENAME).write_text(_pem(generate().private_key))
    other = ec.generate_private_key(ec.SECP256R1())
    with caplog.at_level(logging.WARNING, logger="credence.notify.runtime"):
        keys = await load_vapid_keys(store, tmp_path / "data", _pem(other))
    assert keys.public_key_b64url == _public_b64(other)
    assert "differs" in caplog.text


def test_parse_private_key_refuses_other_curves():
    other = ec.generate_private_key(ec.SECP384R1())
    pem = other.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    with pytest.raises(ValueError, match="P-256"):
        parse_private_key(pem)


@pytest.mark.parametrize(
    "subject",
    [
        "mailto:admin@credence-push.org",
        "MAILTO:Admin@Credence-Push.ORG",
        "mailto:first.last+push@mail.credence-push.co.uk",
        "https://credence-push.org",
        "https://credence-push.org/contact",
        "mailto:ops@bücher.de",
    ],
)
def test_real_subjects_are_accepted(subject: str):
    assert validate_subject(f"  {subject} ").lower().startswith(("mailto:", "https://"))


@pytest.mark.parametrize(
    "subject",
    [
        "mailto:admin@localhost",
        "mailto:admin@box.localhost",
        "mailto:admin@printer.local",
        "mailto:admin@credence.test",
        "mailto:admin@credence.invalid",
        "mailto:admin@credence.example",
        "mailto:admin@example.com",
        "mailto:admin@mail.example.org",
        "mailto:admin@example.net",
        "mailto:admin@127.0.0.1",
        "mailto:admin@[127.0.0.1]",
        "mailto:admin@[IPv6:::1]",
        "mailto:admin@intranet",
        "mailto:@credence-push.org",
        "mailto:admin",
        "mailto:admin@credence-push.org?subject=hi",
        "https://localhost",
        "https://192.168.1.10/contact",
        "https://[::1]/",
        "https://example.com/contact",
        "https://user:pw@credence-push.org",
        "http://credence-push.org",
        "admin@credence-push.org",
        "",
    ],
)
def test_unreal_subjects_are_refused_naming_the_setting(subject: str):
    with pytest.raises(ValueError, match="CREDENCE_VAPID_SUBJECT"):
        validate_subject(subject)


@pytest.mark.parametrize(
    ("endpoint", "audience"),
    [
        ("https://fcm.googleapis.com/fcm/send/abc:def", "https://fcm.googleapis.com"),
        ("https://Push.Services.Mozilla.com/wpush/v2/x?y=1", "https://push.services.mozilla.com"),
        ("https://web.push.apple.com:443/QA", "https://web.push.apple.com"),
        ("https://push.credence-push.org:8443/x", "https://push.credence-push.org:8443"),
        ("http://127.0.0.1:9999/push/a", "http://127.0.0.1:9999"),
        ("http://[::1]:9999/push/a", "http://[::1]:9999"),
    ],
)
def test_audience_is_the_endpoint_origin(endpoint: str, audience: str):
    assert audience_for(endpoint) == audience


def test_vapid_header_carries_a_verifiable_token_over_fresh_claims(tmp_path: Path):
    keys = generate()
    endpoint = "https://fcm.googleapis.com/fcm/send/abc"
    header = vapid_headers(keys, endpoint, SUBJECT, 3600, NOW)["Authorization"]
    assert header.startswith("vapid t=")
    assert Vapid02.verify(header)
    params = dict(part.split("=", 1) for part in header.removeprefix("vapid ").split(","))
    assert params["k"] == keys.public_key_b64url
    claims = decode_jwt(params["t"], params["k"])
    assert claims == {
        "aud": "https://fcm.googleapis.com",
        "exp": int(NOW.timestamp()) + 3600,
        "sub": SUBJECT,
    }
    jwt_header = json.loads(_unb64url(params["t"].split(".")[0]))
    assert jwt_header == {"typ": "JWT", "alg": "ES256"}

    later = vapid_headers(keys, endpoint, SUBJECT, 3600, NOW + timedelta(minutes=5))
    later_claims = decode_jwt(later["Authorization"].split("t=")[1].split(",")[0], params["k"])
    assert later_claims["exp"] == claims["exp"] + 300


@pytest.mark.parametrize("expires_in", [0, -1, 24 * 3600 + 1])
def test_vapid_expiry_must_be_within_24_hours(tmp_path: Path, expires_in: int):
    keys = generate()
    with pytest.raises(ValueError, match="24 hours"):
        vapid_headers(keys, "https://fcm.googleapis.com/x", SUBJECT, expires_in, NOW)


def test_vapid_headers_refuse_a_localhost_subject(tmp_path: Path):
    keys = generate()
    with pytest.raises(ValueError, match="CREDENCE_VAPID_SUBJECT"):
        vapid_headers(keys, "https://fcm.googleapis.com/x", "mailto:me@localhost", 60, NOW)
