"""Gate reasons as one typed ``Reason`` with one codec; the string form is deprecated."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

# Kinds whose target is a belief id or, for the batch kinds, a proposal's index.
TARGETED: Final = frozenset(
    {
        "duplicate_of",
        "near_duplicate_of",
        "previously_forgotten",
        "previously_superseded",
        "duplicate_in_batch",
        "unknown_target",
        "target_forgotten",
        "contradicts",
        "changes",
        "unsettled",
        "contradicts_in_batch",
        "op",
        # Why a proposal was refused before the gate verdict counted (lifecycle/pending.py).
        "unknown_source_episode",
        "target_not_allowed",
        "missing_target",
    }
)
# Kinds that reject a proposal rather than flag it for review.
REJECTING: Final = frozenset(
    {"duplicate_of", "near_duplicate_of", "previously_forgotten", "previously_superseded"}
)
# Kinds that make the gate's verdict ``duplicate``.
DUPLICATE_KINDS: Final = REJECTING | {"duplicate_in_batch"}
ARROW: Final = "\u2192"


class Reason(msgspec.Struct, frozen=True, omit_defaults=True):
    """Why the gate flagged or rejected a proposal.

    ``kind`` names the reason (``contradicts``, ``changes``, ``near_duplicate_of``, …);
    ``target`` the belief id it is about (a proposal index for the ``*_in_batch`` kinds, the
    op for ``op``); ``old``/``new`` the value a ``changes`` reason says changed.
    """

    kind: str
    target: str | None = None
    old: str | None = None
    new: str | None = None


def encode(reason: Reason) -> str:
    """The string form stored and served (deprecated in responses): ``kind``, ``kind:target``
    or ``changes:target:old→new``."""
    if reason.kind == "changes":
        return f"changes:{reason.target}:{reason.old}{ARROW}{reason.new}"
    return reason.kind if reason.target is None else f"{reason.kind}:{reason.target}"


def decode(text: str) -> Reason:
    """The ``Reason`` a string form names; an unknown kind, or a ``changes`` string without
    its ``target:old→new``, keeps its whole text as the kind, so ``encode`` gives it back."""
    kind, colon, rest = text.partition(":")
    if not colon or kind not in TARGETED:
        return Reason(kind=text)
    if kind == "changes":
        target, colon, change = rest.partition(":")
        old, arrow, new = change.partition(ARROW)
        if not colon or not arrow:
            return Reason(kind=text)
        return Reason(kind, target, old, new)
    return Reason(kind, rest)


def encode_all(reasons: Iterable[Reason]) -> list[str]:
    """The string forms of reasons, in order, each once."""
    return [encode(reason) for reason in dict.fromkeys(reasons)]


def decode_all(texts: Iterable[str]) -> list[Reason]:
    """The reasons stored string forms name, in order."""
    return [decode(text) for text in texts]


def targets(reasons: Iterable[Reason], kind: str) -> list[str]:
    """The targets of the reasons of one kind, in order."""
    return [r.target for r in reasons if r.kind == kind and r.target is not None]


class ReasonChange(msgspec.Struct, frozen=True):
    """The value a ``changes`` reason says changed, old and new."""

    old: str
    new: str


class StructuredReason(msgspec.Struct, frozen=True):
    """A gate reason as the API serves it: ``kind``, the belief id (or proposal index) it is
    about in ``target``, and for a ``changes`` reason the value that changed."""

    kind: str
    target: str | None = None
    change: ReasonChange | None = None


def structured(reasons: Iterable[Reason]) -> list[StructuredReason]:
    """The API's structured form of reasons, in order."""
    return [
        StructuredReason(
            kind=reason.kind,
            target=reason.target,
            change=(
                ReasonChange(old=reason.old or "", new=reason.new or "")
                if reason.kind == "changes"
                else None
            ),
        )
        for reason in reasons
    ]
