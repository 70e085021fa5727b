"""Web Push payloads: plain-text, URL-free, byte-budgeted JSON for the service worker (pure)."""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import msgspec

from credence.models.reasons import Reason, targets

# RFC 8291 with one 4096-byte aes128gcm record: 4096 - 86 header - 16 tag - 1 delimiter.
MAX_PAYLOAD_BYTES = 3993
TITLE = "I've learned:"
UNTRUSTED_BODY = "I've learned something from third-party content — review it in Credence"
EMPTY_BODY = "I've learned something new — review it in Credence"
TEST_TITLE = "Credence"
TEST_BODY = "Push notifications work on this device."
ACTIONS = ("keep", "forget")
PROVENANCES = frozenset({"clean", "untrusted", "owner", "unsourced", "imported"})
OPENS_CARD_PROVENANCES = frozenset({"untrusted", "unsourced"})
ELLIPSIS = "…"
MAX_AGENT_NAME_BYTES = 120
# What deciding a belief would do to another one, said before the reviewer decides.
CHANGE_VERBS = {
    "supersede": "Replaces",
    "forget": "Forgets",
    "weaken": "Weakens",
    "strengthen": "Strengthens",
}
CONTRADICTION_VERB = "Replaces"
UNTRUSTED_TARGET = "a belief from third-party content"
UNKNOWN_TARGET = "an existing belief"
MAX_CHANGES_BYTES = 1000

_encode = msgspec.json.Encoder().encode

_MD_IMAGE_OR_LINK = re.compile(
    r"!?\[([^\]\n]*)\]"  # [text] or ![alt]
    r"(?:\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\s*\)"  # (url "title"), one paren level
    r"|\[[^\]\n]*\])"  # or a reference: [text][ref]
)
_MD_REFERENCE_DEFINITION = re.compile(r"^[ \t]*\[[^\]\n]+\]:[ \t]*\S+.*$", re.MULTILINE)
_AUTOLINK = re.compile(r"<(?:[a-z][a-z0-9+.\-]*:|www\.)[^<>\s]*>", re.IGNORECASE)
_BARE_URL = re.compile(r"(?:\b[a-z][a-z0-9+.\-]*://|\bwww\.)[^\s<>]+", re.IGNORECASE)
_STRONG = re.compile(r"\*\*(.+?)\*\*")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")
_WHITESPACE = re.compile(r"\s+")
_TRAILING_URL_PUNCTUATION = ".,;:!?'\""
# Bidi embeddings/overrides/isolates can make a notification read differently than it is.
_INVISIBLE = frozenset(
    "\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff\u00ad"
)
_LINE_BREAKS = frozenset("\t\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def strip_control(text: str) -> str:
    """Drop control, surrogate and invisible bidi characters; line breaks become newlines."""
    kept = []
    for char in text:
        if char in _LINE_BREAKS:
            kept.append("\n")
        elif char in _INVISIBLE or unicodedata.category(char) in ("Cc", "Cs"):
            continue
        else:
            kept.append(char)
    return "".join(kept)


def _drop_url(match: re.Match[str]) -> str:
    url = match.group(0)
    tail = ""
    # Sentence punctuation and an unbalanced closing bracket belong to the prose, not the URL.
    while url and (
        url[-1] in _TRAILING_URL_PUNCTUATION
        or (url[-1] == ")" and url.count("(") < url.count(")"))
        or (url[-1] == "]" and url.count("[") < url.count("]"))
    ):
        tail = url[-1] + tail
        url = url[:-1]
    return tail


def to_plain_text(content: str) -> str:
    """Render belief text as one line of plain text: no URLs, markdown links reduced to text."""
    text = strip_control(content)
    text = _MD_REFERENCE_DEFINITION.sub("", text)
    text = _MD_IMAGE_OR_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub("", text)
    text = _BARE_URL.sub(_drop_url, text)
    text = _STRONG.sub(r"\1", text).replace("`", "")
    text = _WHITESPACE.sub(" ", text)
    text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text)
    return _WHITESPACE.sub(" ", text).strip()


def _encoded_len(text: str) -> int:
    return len(_encode(text)) - 2


def _hard_cut(text: str, length: int) -> str:
    # Don't leave a combining mark, variation selector or ZWJ sequence half-cut.
    while 0 < length < len(text) and (
        unicodedata.category(text[length]).startswith("M")
        or text[length] in "\u200d\ufe0e\ufe0f"
        or text[length - 1] == "\u200d"
    ):
        length -= 1
    return text[:length]


def truncate_to_bytes(text: str, budget: int) -> str:
    """Return ``text`` or its longest word-boundary prefix + "…" whose JSON string form fits.

    ``budget`` counts UTF-8 bytes of the JSON-escaped string without its quotes.
    """
    if _encoded_len(text) <= budget:
        return text
    if _encoded_len(ELLIPSIS) > budget:
        return ""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if _encoded_len(text[:middle] + ELLIPSIS) <= budget:
            low = middle
        else:
            high = middle - 1
    prefix = text[:low]
    if low < len(text) and not text[low].isspace():
        boundary = prefix.rfind(" ")
        # Cutting back to a space that loses more than half the text is worse than a hard cut.
        prefix = prefix[:boundary] if boundary >= low // 2 else _hard_cut(text, low)
    return prefix.rstrip(" ,;:-–—") + ELLIPSIS


def _fit(message: dict[str, Any], body: str) -> bytes:
    message["body"] = ""
    budget = MAX_PAYLOAD_BYTES - len(_encode(message))
    if budget < 0:
        raise ValueError("push payload fields other than the body exceed the byte budget")
    message["body"] = truncate_to_bytes(body, budget)
    return _encode(message)


def contradicted_ids(review_reasons: Sequence[Reason]) -> list[str]:
    """The belief ids a belief's review reasons flag as ``contradicts``, in order."""
    return targets(review_reasons, "contradicts")


def opens_only(op: str, review_reasons: Sequence[Reason]) -> bool:
    """Whether deciding this belief changes another one, so only the full card may decide it.

    A lock-screen tap must never retire, weaken or forget an active belief the reviewer did not
    see: every op but ``add``, and any flagged contradiction, opens the card instead.
    """
    return op != "add" or bool(contradicted_ids(review_reasons))


def keep_opens_card(provenance: str) -> bool:
    """Whether a notification's Keep must open the card: the belief cites no source episode,
    or third-party content. Its text may be an attacker's, so one lock-screen tap must never
    make it memory; the reviewer reads the card (which says why) and decides there."""
    return provenance in OPENS_CARD_PROVENANCES


TAP_CHANGES_ANOTHER = "open the card to decide: this belief would change another one"
TAP_UNTRUSTED_KEEP = (
    "open the card to decide: this belief cites no source episode or third-party content,"
    " so it is never kept from a notification"
)


def tap_refusal(
    op: str, review_reasons: Sequence[Reason], provenance: str, action: str
) -> str | None:
    """Why a notification's ``action`` (keep or forget) may not decide this belief, or None.

    The one rule for every channel's buttons (Web Push and ntfy): a belief that changes another
    opens the card for either button; an unsourced or untrusted one is never kept by a tap.
    """
    if opens_only(op, review_reasons):
        return TAP_CHANGES_ANOTHER
    if action == "keep" and keep_opens_card(provenance):
        return TAP_UNTRUSTED_KEEP
    return None


def changed_id(
    op: str, target_belief_id: str | None, review_reasons: Sequence[Reason]
) -> str | None:
    """The belief a pending belief would change: its target, else the first it contradicts."""
    if op != "add":
        return target_belief_id
    flagged = contradicted_ids(review_reasons)
    return flagged[0] if flagged else None


def changes_line(op: str, target_content: str | None, target_provenance: str | None) -> str:
    """ "Replaces: …" / "Forgets: …" / … with the target's plain text, bounded like a body.

    A target of untrusted provenance is named neutrally, as an untrusted body is.
    """
    verb = CHANGE_VERBS.get(op, CONTRADICTION_VERB)
    if target_content is None:
        text = UNKNOWN_TARGET
    elif target_provenance == "untrusted":
        text = UNTRUSTED_TARGET
    else:
        text = to_plain_text(target_content) or UNKNOWN_TARGET
    return truncate_to_bytes(f"{verb}: {text}", MAX_CHANGES_BYTES)


def build_payload(
    *,
    belief_id: str,
    agent_id: str,
    agent_name: str,
    content: str,
    provenance: str,
    pending_count: int,
    token: str,
    ttl_seconds: int,
    op: str = "add",
    changes: str | None = None,
) -> bytes:
    """Return the ``belief.pending`` push message as UTF-8 JSON of at most 3993 bytes.

    Untrusted-provenance beliefs never carry their content: third-party text must not reach a
    lock screen dressed as the agent's own lesson. ``ttl_seconds`` tells the service worker how
    long the message and its capability token are meant to live. ``changes`` (from
    ``changes_line``) marks a belief that changes another: the message then carries ``op`` and
    ``opens_only``, and the service worker's buttons open the card instead of deciding; so
    does an unsourced or untrusted belief (``keep_opens_card``).
    """
    if provenance not in PROVENANCES:
        raise ValueError(f"unknown provenance {provenance!r}")
    body = UNTRUSTED_BODY if provenance == "untrusted" else (to_plain_text(content) or EMPTY_BODY)
    name = _WHITESPACE.sub(" ", strip_control(agent_name)).strip()
    message: dict[str, Any] = {
        "type": "belief.pending",
        "belief_id": belief_id,
        "agent_id": agent_id,
        "agent_name": truncate_to_bytes(name, MAX_AGENT_NAME_BYTES),
        "title": TITLE,
        "body": "",
        "url": f"/?belief={quote(belief_id, safe='')}",
        "pending_count": int(pending_count),
        "token": token,
        "actions": list(ACTIONS),
        "ttl_seconds": int(ttl_seconds),
    }
    if changes is not None:
        message.update(op=op, opens_only=True, changes=changes)
    elif keep_opens_card(provenance):
        message["opens_only"] = True
    return _fit(message, body)


def build_test_payload(*, pending_count: int = 0, test_id: str | None = None) -> bytes:
    """Return a ``test`` push message (no actions, opens the app) to check a device works."""
    message: dict[str, Any] = {
        "type": "test",
        "title": TEST_TITLE,
        "body": TEST_BODY,
        "url": "/",
        "pending_count": int(pending_count),
        "actions": [],
    }
    if test_id is not None:
        message["test_id"] = test_id
    return _encode(message)


def topic_for(belief_id: str) -> str:
    """Return the Web Push ``Topic`` for a belief: 32 base64url chars of its SHA-256.

    A newer message with the same topic replaces an undelivered older one at the push service.
    """
    digest = hashlib.sha256(belief_id.encode("utf-8")).digest()[:24]
    return base64.urlsafe_b64encode(digest).decode("ascii")
