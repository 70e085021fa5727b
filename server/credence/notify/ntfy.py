"""ntfy channels: topic URLs, the JSON messages with one-tap Keep/Forget actions, publishing."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import httpx

from credence.notify import webpush
from credence.notify.payload import (
    UNTRUSTED_BODY,
    keep_opens_card,
    opens_only,
    strip_control,
    to_plain_text,
)
from credence.notify.payload import truncate_to_bytes as _cut
from credence.notify.webpush import Outcome, SendResult

if TYPE_CHECKING:
    from credence.db.notices import NoticeItem

KIND = "ntfy"
# ntfy's own topic rule; a topic is a capability (whoever knows it reads the notifications).
_TOPIC = re.compile(r"[-_A-Za-z0-9]{1,64}")
ACTION_PATH = "/api/v1/push/ntfy-actions"
# Beliefs whose content is not the agent's own lesson from its own sources: no lock-screen Keep.
MAX_MESSAGE_BYTES = 3500
TAGS_HIGH = ["warning"]
TAGS_NORMAL = ["brain"]


def split_topic_url(url: str) -> tuple[str, str]:
    """(server root, topic) of an ntfy topic URL; ValueError naming what is wrong."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("an ntfy topic URL is http(s)://host/topic")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("an ntfy topic URL has no query, fragment or user info (use token)")
    path = parts.path.strip("/")
    prefix, _, topic = path.rpartition("/")
    if not _TOPIC.fullmatch(topic):
        raise ValueError("the topic is 1 to 64 letters, digits, '-' or '_'")
    root = f"{parts.scheme}://{parts.netloc}" + (f"/{prefix}" if prefix else "")
    return root, topic


def mask_topic_url(url: str) -> str:
    """The topic URL as it may be shown: scheme and host only (the topic is a secret)."""
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}/…"


def _priority(urgency: str) -> int:
    return {"high": 5, "normal": 3, "low": 2}.get(urgency, 3)


def belief_message(
    *,
    row: NoticeItem,
    urgency: str,
    base_url: str,
    token: str,
    changes: str | None,
) -> dict[str, Any]:
    """The ntfy message for one pending belief (no topic: added when it is published).

    Keep and Forget are ``http`` actions the ntfy app POSTs to Credence with a signed,
    single-use token bound to the belief and its version. A belief that would change another
    only opens its card; untrusted or unsourced content gets no Keep from the lock screen.
    """
    base = base_url.rstrip("/")
    link = f"{base}/?belief={quote(row.belief_id, safe='')}"
    provenance = row.provenance
    body = UNTRUSTED_BODY if provenance == "untrusted" else to_plain_text(row.content)
    if changes:
        body = f"{body}\n{changes}"
    agent = " ".join(strip_control(row.agent_name).split())[:60]
    actions: list[dict[str, Any]] = []
    if opens_only(row.op, row.review_reasons):
        actions.append({"action": "view", "label": "Open", "url": link, "clear": True})
    else:
        choices = ("forget",) if keep_opens_card(provenance) else ("keep", "forget")
        for action in choices:
            actions.append(
                {
                    "action": "http",
                    "label": action.title(),
                    "url": f"{base}{ACTION_PATH}",
                    "method": "POST",
                    "headers": {"Content-Type": "application/json"},
                    "body": json.dumps({"token": token, "action": action}),
                    "clear": True,
                }
            )
    return {
        "title": f"{agent}: I've learned" if agent else "I've learned",
        "message": _cut(body or "I've learned something new", MAX_MESSAGE_BYTES),
        "tags": TAGS_HIGH if urgency == "high" else TAGS_NORMAL,
        "priority": _priority(urgency),
        "click": link,
        "actions": actions,
    }


def digest_message(*, text: str, urgency: str, base_url: str) -> dict[str, Any]:
    """The ntfy message for a digest or reminder: one ``view`` action opening the pile."""
    pile = base_url.rstrip("/") + "/"
    return {
        "title": "Credence",
        "message": _cut(text, MAX_MESSAGE_BYTES),
        "tags": TAGS_HIGH if urgency == "high" else TAGS_NORMAL,
        "priority": 4 if urgency == "high" else 3,
        "click": pile,
        "actions": [{"action": "view", "label": "Review", "url": pile, "clear": True}],
    }


def encode(message: dict[str, Any]) -> str:
    """The stored form of a message (the outbox body)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


async def publish(
    client: httpx.AsyncClient,
    topic_url: str,
    access_token: str | None,
    stored: str,
    now: datetime,
    *,
    title: str = "Credence",
) -> SendResult:
    """Publish one stored message with ntfy's JSON API (POST to the server root, with topic).

    2xx is sent; 429 and 5xx are retried (Retry-After honoured); other answers fail.
    """
    root, topic = split_topic_url(topic_url)
    try:
        message = json.loads(stored)
        if not isinstance(message, dict):
            raise ValueError
    except ValueError:  # a plain-text row queued before the channel was ntfy's
        message = {"title": title, "message": stored}
    headers = {"Authorization": f"Bearer {access_token}"} if access_token else {}
    try:
        answer = await client.post(root + "/", json={**message, "topic": topic}, headers=headers)
    except httpx.HTTPError as exc:
        return SendResult(Outcome.RETRY, None, None, f"ntfy unreachable ({type(exc).__name__})")
    code = answer.status_code
    if 200 <= code < 300:
        return SendResult(Outcome.SENT, code, None, "delivered")
    retry_after = webpush.parse_retry_after(answer.headers.get("Retry-After"), now)
    if code == 429:
        return SendResult(Outcome.RETRY_AFTER, code, retry_after, "ntfy rate limit (429)")
    if code >= 500:
        return SendResult(Outcome.RETRY, code, retry_after, f"ntfy answered {code}")
    return SendResult(Outcome.FAILED, code, None, f"ntfy refused the message ({code})")


def labels(message: dict[str, Any]) -> Sequence[str]:
    """The labels of a message's actions (for logs and tests)."""
    return [action["label"] for action in message.get("actions", [])]
