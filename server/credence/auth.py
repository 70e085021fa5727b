"""Names kept for code written before ``credence.access``: keys, principals, pairing, guards.

New code imports from ``credence.access`` (and the HTTP middleware from ``credence.api.auth``).
"""

from __future__ import annotations

from credence.access.keys import KEY_PREFIX, KeyRing, generate_key, hash_secret
from credence.access.keys import create_key as insert_key
from credence.access.keys import key_info as key_row
from credence.access.pairing import (
    PAIRING_TTL,
    PairingRefused,
    generate_pairing_code,
    redeem_pairing_code,
)
from credence.access.pairing import create_pairing_code as insert_pairing_code
from credence.access.principal import Principal, admin_only, reviewer_or_admin

__all__ = [
    "KEY_PREFIX",
    "PAIRING_TTL",
    "KeyRing",
    "PairingRefused",
    "Principal",
    "admin_only",
    "generate_key",
    "generate_pairing_code",
    "hash_secret",
    "insert_key",
    "insert_pairing_code",
    "key_row",
    "redeem_pairing_code",
    "reviewer_or_admin",
]
