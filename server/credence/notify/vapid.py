"""VAPID (RFC 8292): the server's P-256 identity key, subject validation and signed headers."""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02
from py_vapid.jwt import sign as sign_jwt

log = logging.getLogger(__name__)

VAPID_KEY_FILENAME = "vapid_private.pem"
SUBJECT_SETTING = "CREDENCE_VAPID_SUBJECT"
PRIVATE_KEY_SETTING = "CREDENCE_VAPID_PRIVATE_KEY"
# RFC 8292 §2: exp must be no more than 24 hours after the request is made.
MAX_EXPIRES_IN = 24 * 3600

_RESERVED_SUFFIXES = (
    "localhost",
    "local",
    "test",
    "invalid",
    "example",
    "internal",
    "localdomain",
    "home.arpa",
    "example.com",
    "example.org",
    "example.net",
)
_DNS_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_DEFAULT_PORTS = {"https": 443, "http": 80}


@dataclass(frozen=True)
class VapidKeys:
    """The server's P-256 key pair; ``public_key_b64url`` is PushManager's applicationServerKey."""

    private_key: ec.EllipticCurvePrivateKey = field(repr=False)
    public_key_b64url: str
    source: Literal["generated", "file", "setting", "database"]
    # Kept so callers that want py_vapid's own API (e.g. a CLI) don't re-parse the key.
    vapid: Vapid02 = field(repr=False, compare=False)

    @classmethod
    def from_private_key(
        cls,
        private_key: ec.EllipticCurvePrivateKey,
        source: Literal["generated", "file", "setting", "database"],
    ) -> VapidKeys:
        """Wrap a P-256 private key, deriving the base64url uncompressed public point once."""
        if not isinstance(private_key.curve, ec.SECP256R1):
            raise ValueError(f"VAPID keys must be on P-256, not {private_key.curve.name}")
        point = private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return cls(
            private_key=private_key,
            public_key_b64url=b64url_encode(point),
            source=source,
            vapid=Vapid02(private_key),
        )

    def private_pem(self) -> bytes:
        """Return the private key as unencrypted PKCS#8 PEM."""
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def b64url_encode(data: bytes) -> str:
    """Encode bytes as base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode base64url with or without padding; any other character raises ValueError."""
    stripped = text.strip().rstrip("=")
    if not re.fullmatch(r"[A-Za-z0-9_-]*", stripped) or len(stripped) % 4 == 1:
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    except binascii.Error as exc:
        raise ValueError("not base64url") from exc


def parse_private_key(text: str) -> ec.EllipticCurvePrivateKey:
    """Parse a P-256 private key given as PEM (PKCS#8 or SEC1), raw base64url (32 bytes) or DER."""
    candidate = text.strip()
    if "-----BEGIN" in candidate:
        # Environment variables often carry PEM with literal "\n" sequences.
        if "\n" not in candidate and "\\n" in candidate:
            candidate = candidate.replace("\\n", "\n")
        try:
            key = serialization.load_pem_private_key(candidate.encode("ascii"), password=None)
        except (ValueError, TypeError, UnicodeEncodeError) as exc:
            raise ValueError(f"{PRIVATE_KEY_SETTING} is not an unencrypted PEM key") from exc
    else:
        try:
            raw = b64url_decode(candidate.replace("+", "-").replace("/", "_"))
        except ValueError as exc:
            raise ValueError(
                f"{PRIVATE_KEY_SETTING} must be a PEM key or a base64url raw P-256 private key"
            ) from exc
        if len(raw) == 32:
            try:
                key = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
            except ValueError as exc:
                raise ValueError(f"{PRIVATE_KEY_SETTING} is not a valid P-256 scalar") from exc
        else:
            try:
                key = serialization.load_der_private_key(raw, password=None)
            except (ValueError, TypeError) as exc:
                raise ValueError(
                    f"{PRIVATE_KEY_SETTING} must be a PEM key or a base64url raw P-256 private key"
                ) from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError(f"{PRIVATE_KEY_SETTING} must be an EC P-256 (prime256v1) key")
    return key


def generate() -> VapidKeys:
    """A fresh P-256 key pair."""
    return VapidKeys.from_private_key(ec.generate_private_key(ec.SECP256R1()), "generated")


def supplied_keys(supplied: str | None) -> VapidKeys | None:
    """The keys CREDENCE_VAPID_PRIVATE_KEY gives, or None when it is unset or blank."""
    if supplied is None or not supplied.strip():
        return None
    return VapidKeys.from_private_key(parse_private_key(supplied), "setting")


def keys_from_pem(
    pem: bytes, source: Literal["generated", "file", "database"], origin: str
) -> VapidKeys:
    """Load a stored PEM key; ValueError names ``origin`` when it is not a P-256 key."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"{origin} is not a readable VAPID private key; refusing to replace it (a new key"
            " invalidates every push subscription)"
        ) from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError(f"{origin} does not hold an EC P-256 key; refusing to replace it")
    return VapidKeys.from_private_key(key, source)


def legacy_pem(data_dir: Path) -> bytes | None:
    """The key an older Credence kept in ``data_dir/vapid_private.pem`` (checked), or None.

    Adopted into the database once, so devices subscribed before the upgrade keep working.
    """
    path = Path(data_dir) / VAPID_KEY_FILENAME
    if not path.is_file():
        return None
    pem = path.read_bytes()
    keys_from_pem(pem, "file", str(path))
    return pem


@functools.lru_cache(maxsize=32)
def validate_subject(subject: str) -> str:
    """Return the VAPID subject if it is a mailto: or https: URI at a public domain.

    Push services (Apple's in particular) reject localhost and reserved names, so those fail
    here, at startup, with a message naming the setting.
    """
    text = subject.strip()
    lowered = text.lower()
    if lowered.startswith("mailto:"):
        address = text[len("mailto:") :]
        local, at, host = address.rpartition("@")
        if not at or not local or re.search(r"[\s?,<>]", address):
            raise ValueError(
                f"{SUBJECT_SETTING} must look like mailto:you@your-domain.org, got {subject!r}"
            )
        return f"mailto:{local}@{_public_host(host, subject)}"
    if lowered.startswith("https://"):
        parts = urlsplit(text)
        if parts.username is not None or parts.password is not None or not parts.netloc:
            raise ValueError(f"{SUBJECT_SETTING} must be https://your-domain/..., got {subject!r}")
        host = parts.netloc.rsplit("@", 1)[-1]
        host = host if host.startswith("[") else host.split(":", 1)[0]
        _public_host(host, subject)
        return text
    raise ValueError(
        f"{SUBJECT_SETTING} must be a mailto: or https: URI at a real domain "
        f"(e.g. mailto:admin@your-domain.org), got {subject!r}"
    )


def _public_host(host: str, subject: str) -> str:
    candidate = host.strip().lower().rstrip(".")
    refusal = f"{SUBJECT_SETTING} must name a real public domain, got {subject!r}"
    if candidate.startswith("["):
        raise ValueError(f"{refusal}: IP literals are refused by push services")
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        pass
    else:
        raise ValueError(f"{refusal}: IP literals are refused by push services")
    try:
        ascii_host = candidate.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"{refusal}: not a valid host name") from exc
    labels = ascii_host.split(".")
    if len(labels) < 2:
        raise ValueError(f"{refusal}: a host without a dot is not a public domain")
    if not all(_DNS_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        raise ValueError(f"{refusal}: not a valid host name")
    for suffix in _RESERVED_SUFFIXES:
        if ascii_host == suffix or ascii_host.endswith("." + suffix):
            raise ValueError(f"{refusal}: {suffix} is reserved (Apple rejects such subjects)")
    return ascii_host


def audience_for(endpoint: str) -> str:
    """Return the JWT audience for an endpoint: its origin, scheme://host[:non-default port]."""
    parts = urlsplit(endpoint)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"push endpoint {endpoint!r} has no http(s) origin")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}:{port}"
    return f"{scheme}://{host}"


def vapid_headers(
    keys: VapidKeys, endpoint: str, subject: str, expires_in: int, now: datetime
) -> dict[str, str]:
    """Return the ``Authorization: vapid t=…,k=…`` header signed over fresh claims for one send.

    The JWT is signed with py_vapid's ES256 signer. Vapid02.sign is not called because its own
    regexes refuse https subjects with a path and IPv6 audiences; both are validated here instead,
    and the header has exactly Vapid02's format.
    """
    if not 0 < expires_in <= MAX_EXPIRES_IN:
        raise ValueError(f"VAPID expiry must be within 24 hours, got {expires_in} s")
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    claims = {
        "aud": audience_for(endpoint),
        "exp": int(now.timestamp()) + int(expires_in),
        "sub": validate_subject(subject),
    }
    token = sign_jwt(claims, keys.private_key)
    return {"Authorization": f"vapid t={token},k={keys.public_key_b64url}"}
