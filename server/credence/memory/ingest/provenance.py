"""Provenance evidence: did third-party content reach a turn? (pure; it only raises origin)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

# Metadata keys agent frameworks use for content that did not come from the user or the agent.
_THIRD_PARTY_KEYS = {
    "tool_output",
    "tool_outputs",
    "tool_results",
    "retrieved",
    "retrieval",
    "documents",
    "sources",
    "web",
    "web_results",
    "urls",
    "emails",
    "email",
    "attachments",
    "search_results",
}
_EMAIL_HEADERS = re.compile(r"(?im)^(from|to|subject|reply-to):[^\n]{1,200}$")
_HTML = re.compile(r"(?i)<(html|body|script|iframe|div|table|a\s+href)\b")


def third_party_reasons(summary: str, metadata: Mapping[str, Any]) -> list[str]:
    """Reasons to treat an episode as untrusted, from its own content and metadata."""
    reasons = []
    present = {k.lower() for k, v in metadata.items() if v not in (None, "", [], {}, False)}
    if present & _THIRD_PARTY_KEYS:
        reasons.append("third_party_metadata")
    if len(_EMAIL_HEADERS.findall(summary[:20000])) >= 2:
        reasons.append("email_content")
    if _HTML.search(summary[:20000]):
        reasons.append("html_content")
    return reasons


def combine_origin(declared: str, reasons: list[str]) -> str:
    """The stored origin: the declared one, raised to untrusted by evidence, never lowered."""
    return "untrusted" if declared == "untrusted" or reasons else "clean"


# An agent that cites nothing may still have read something: a proposal with no source episodes
# is untrusted when the agent stored a third-party episode less than this long before it.
UNSOURCED_WINDOW = timedelta(hours=24)
# The review reason that says so on the card.
RECENT_THIRD_PARTY = "unsourced_after_third_party"


def proposal_provenance(
    *, cited_untrusted: bool, sourced: bool, recent_untrusted: bool, imported: bool = False
) -> str:
    """A new proposal's provenance: ``untrusted`` when it cites third-party content; ``imported``
    for a rule read from a person's memory file; ``untrusted`` when it cites nothing while the
    agent read third-party content within UNSOURCED_WINDOW; else ``clean`` when it cites
    episodes, ``unsourced`` when it cites none."""
    if cited_untrusted:
        return "untrusted"
    if imported:
        return "imported"
    if not sourced and recent_untrusted:
        return "untrusted"
    return "clean" if sourced else "unsourced"
