"""Text keys for beliefs: duplicate key, content tokens, negation, overlap, canonical alignment."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Set as AbstractSet
from functools import lru_cache

import msgspec

# Apostrophes join ("don't" -> "dont") so contractions stay one token and match their
# apostrophe-less spelling; every other punctuation mark separates words.
_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc\u0060\u00b4]")
_NON_WORD = re.compile(r"[^\w\s]|_")
_WHITESPACE = re.compile(r"\s+")
_HAS_ALNUM = re.compile(r"[^\W_]")

NEGATION_WORDS: frozenset[str] = frozenset(
    {
        "never",
        "not",
        "no",
        "none",
        "nothing",
        "nobody",
        "nowhere",
        "neither",
        "nor",
        "dont",
        "doesnt",
        "didnt",
        "isnt",
        "arent",
        "wasnt",
        "werent",
        "havent",
        "hasnt",
        "hadnt",
        "wont",
        "wouldnt",
        "cant",
        "cannot",
        "couldnt",
        "shouldnt",
        "mustnt",
        "neednt",
        "stop",
        "stops",
        "stopped",
        "stopping",
        "avoid",
        "avoids",
        "avoided",
        "avoiding",
        "refuse",
        "refuses",
        "refused",
        "refusing",
        "without",
    }
)

# Function words plus the filler of imperative lessons ("always", "please", "make sure to",
# "use"): they carry no topic, and counting them would make unrelated lessons overlap.
STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "so",
        "as",
        "than",
        "too",
        "very",
        "just",
        "also",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "about",
        "above",
        "after",
        "again",
        "against",
        "before",
        "below",
        "between",
        "during",
        "through",
        "under",
        "until",
        "up",
        "down",
        "out",
        "off",
        "over",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "because",
        "while",
        "since",
        "per",
        "via",
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "us",
        "our",
        "ours",
        "you",
        "your",
        "yours",
        "yourself",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "done",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "ought",
        "all",
        "any",
        "both",
        "each",
        "every",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "same",
        "own",
        "only",
        "always",
        "please",
        "thanks",
        "thank",
        "ok",
        "okay",
        "yes",
        "yeah",
        "hey",
        "hi",
        "actually",
        "really",
        "use",
        "uses",
        "used",
        "using",
        "make",
        "makes",
        "made",
        "sure",
        "try",
        "get",
        "gets",
        "got",
        "let",
        "lets",
        "like",
        "one",
        "thing",
        "things",
        "way",
        "etc",
        "eg",
        "ie",
    ]
)

_NO_LONGER = "longer"


def normalise(text: str) -> str:
    """Return the duplicate key: NFKC, case-folded, punctuation stripped, whitespace collapsed.

    Apostrophes are removed so "Don't" and "dont" agree; any other punctuation becomes a space
    so "re-run" and "re run" agree. Symbols that carry meaning ("+", "%", "$") are kept.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _APOSTROPHES.sub("", folded)
    folded = _NON_WORD.sub(_punctuation_to_space, folded)
    return _WHITESPACE.sub(" ", folded).strip()


def _punctuation_to_space(match: re.Match[str]) -> str:
    char = match.group(0)
    return " " if _is_punctuation(char) else char


@lru_cache(maxsize=4096)
def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P")


def words(text: str) -> list[str]:
    """Return the normalised words of ``text`` in order (stop and negation words included)."""
    return normalise(text).split()


def content_tokens(text: str) -> frozenset[str]:
    """Return the topic words of ``text``: stop words and negation markers removed, plurals folded.

    Negations are dropped so that "Never retry uploads" and "Retry uploads" share every token:
    polarity is judged separately by :func:`is_negative`.
    """
    return _content_tokens_of(words(text))


def _content_tokens_of(tokens: list[str]) -> frozenset[str]:
    kept: set[str] = set()
    previous = ""
    for token in tokens:
        skip = (
            token in STOP_WORDS
            or token in NEGATION_WORDS
            or (token == _NO_LONGER and previous == "no")
            or (len(token) == 1 and token.isalpha())
            or not (token.isalnum() or _HAS_ALNUM.search(token))
        )
        previous = token
        if not skip:
            kept.add(_fold_plural(token))
    return frozenset(kept)


@lru_cache(maxsize=65536)
def _fold_plural(token: str) -> str:
    # Only the regular English plural: stronger stemming merges words that differ in meaning.
    if len(token) <= 3 or not token.endswith("s") or token.endswith(("ss", "us", "is")):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "xes", "ches", "shes", "zes")):
        return token[:-2]
    return token[:-1]


def is_negative(text: str) -> bool:
    """Return True when ``text`` carries a negation marker (never, don't, stop, avoid, …)."""
    return _is_negative_of(words(text))


def _is_negative_of(tokens: list[str]) -> bool:
    return any(token in NEGATION_WORDS for token in tokens)


def analyse(text: str) -> tuple[str, frozenset[str], bool]:
    """Return ``(normalise(text), content_tokens(text), is_negative(text))`` in one pass."""
    key = normalise(text)
    tokens = key.split()
    return key, _content_tokens_of(tokens), _is_negative_of(tokens)


def jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    """Return |a ∩ b| / |a ∪ b|; two empty sets share no evidence, so they score 0.0."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


# --- structural comparison: canonical statements, token alignment and value slots ----------
#
# Two lessons are compared as canonical token sequences: fillers dropped, numbers and units
# folded to one quantity token, comparatives and periods to one symbol, light stemming, and a
# leading subordinate clause moved behind its main clause. Equal bags of canonical tokens are a
# paraphrase; sequences that agree except for short aligned spans which hold values of one
# kind (a number, a time, a name, a language, …) are a value change.

_RAW_TOKEN = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 10,000 or 1,250.5
    r"|\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?"  # 14:00, 2:30pm
    r"|[@#]?\w+(?:[.\-_/+]\w+)*\+*"  # words, versions, regions, next.js, c++
    r"|[%$€£,;]",
)
_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)([a-z%$€£]+)?$")
_CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\.?$")
_BARE_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")
_REGION_SHAPE = re.compile(r"^[a-z]{2,}(?:-[a-z]+)+-\d+[a-z]?$")
_IDENTIFIER_SHAPE = re.compile(r"[a-z][.\-+_]|[.\-+_][a-z]|[a-z]\d|\d[a-z]|\+$")
_HAS_DIGIT = re.compile(r"\d")

_NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_NUMBER_WORDS |= {
    word: 10 * (position + 2)
    for position, word in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    )
}
_NUMBER_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}

# unit spelling -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, float]] = {}
for _dimension, _factor, _spellings in (
    ("bytes", 1.0, "b byte bytes"),
    ("bytes", 1024.0, "kb kib kilobyte kilobytes k"),
    ("bytes", 1024.0**2, "mb mib megabyte megabytes meg megs"),
    ("bytes", 1024.0**3, "gb gib gigabyte gigabytes gig gigs"),
    ("bytes", 1024.0**4, "tb tib terabyte terabytes"),
    ("time", 0.001, "ms msec millisecond milliseconds"),
    ("time", 1.0, "s sec secs second seconds"),
    ("time", 60.0, "min mins minute minutes"),
    ("time", 3600.0, "h hr hrs hour hours"),
    ("time", 86400.0, "d day days"),
    ("time", 7 * 86400.0, "w wk wks week weeks"),
    ("time", 30 * 86400.0, "mo month months"),
    ("time", 365 * 86400.0, "y yr yrs year years"),
    ("percent", 1.0, "% percent pct"),
    ("usd", 1.0, "$ usd dollar dollars"),
    ("eur", 1.0, "€ eur euro euros"),
    ("gbp", 1.0, "£ gbp pound pounds"),
):
    for _spelling in _spellings.split():
        _UNITS[_spelling] = (_dimension, _factor)
_PREFIX_UNITS = frozenset({"$", "€", "£"})
# One-letter units count only when written onto the number ("30s", "2h"), never as a word.
_ONE_LETTER_UNITS = frozenset({"k", "b", "s", "h", "d", "w", "y"})
# "k" after a bare number is a thousand ("10k rows"), not a kilobyte.
_THOUSANDS = "k"

_PERIODS = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "night",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annually": "year",
}
_PERIOD_NOUNS = {
    "hour": "hour",
    "day": "day",
    "night": "night",
    "evening": "night",
    "week": "week",
    "month": "month",
    "year": "year",
}
_PERIOD_LEADS = frozenset({"every", "each", "per", "a", "an", "once"})

# Phrases with one canonical symbol; the longest match wins.
_PHRASES: dict[tuple[str, ...], str] = {}
for _symbol, _phrases in (
    (
        ">",
        "over|above|beyond|exceeding|more than|larger than|bigger than|greater than|higher than"
        "|longer than|heavier than|older than|later than|in excess of",
    ),
    ("<", "under|below|less than|smaller than|fewer than|shorter than|lower than|younger than"),
    (">=", "at least|no less than|not less than|no fewer than|or more|minimum of|a minimum of"),
    ("<=", "at most|up to|no more than|not more than|or less|or fewer|maximum of|a maximum of"),
    ("", "always|reliably|consistently|invariably|routinely|dependably|unfailingly|every time"),
    ("", "without fail|all the time|make sure to|make sure you|make sure|be sure to|remember to"),
    ("", "please|kindly|in general|generally|by default"),
):
    for _phrase in _phrases.split("|"):
        _PHRASES[tuple(_phrase.split())] = _symbol
_LONGEST_PHRASE = max(len(phrase) for phrase in _PHRASES)

# Words that carry no slot and no meaning a paraphrase must keep.
_FILLERS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "should",
        "must",
        "will",
        "shall",
        "would",
        "can",
        "could",
        "may",
        "might",
        "ought",
        "need",
        "needs",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "that",
        "which",
        "who",
        "it",
        "its",
        "this",
        "these",
        "those",
        "you",
        "your",
        "we",
        "our",
        "us",
        "they",
        "their",
    ]
)
_SUBORDINATORS = frozenset(
    [
        "before",
        "after",
        "when",
        "whenever",
        "if",
        "unless",
        "once",
        "while",
        "until",
        "because",
        "since",
    ]
)

# Small generic classes of slot values (not lists of any one lesson's values).
_WEEKDAYS = frozenset(
    [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "weekday",
        "weekend",
    ]
)
_MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
_DAY_PARTS = frozenset(["morning", "afternoon", "evening", "night", "noon", "midnight", "midday"])
_LANGUAGES = frozenset(
    [
        "english",
        "french",
        "german",
        "spanish",
        "italian",
        "portuguese",
        "dutch",
        "swedish",
        "norwegian",
        "danish",
        "finnish",
        "polish",
        "czech",
        "greek",
        "turkish",
        "russian",
        "ukrainian",
        "arabic",
        "hebrew",
        "hindi",
        "bengali",
        "urdu",
        "chinese",
        "mandarin",
        "cantonese",
        "japanese",
        "korean",
        "vietnamese",
        "thai",
        "indonesian",
        "malay",
        "python",
        "javascript",
        "typescript",
        "java",
        "kotlin",
        "swift",
        "rust",
        "go",
        "golang",
        "ruby",
        "php",
        "perl",
        "scala",
        "haskell",
        "elixir",
        "erlang",
        "clojure",
        "lua",
        "bash",
        "sql",
        "c++",
        "c#",
        "csharp",
        "dart",
        "r",
        "julia",
    ]
)
_FORMATS = frozenset(
    [
        "csv",
        "tsv",
        "json",
        "jsonl",
        "ndjson",
        "xml",
        "yaml",
        "yml",
        "toml",
        "ini",
        "parquet",
        "avro",
        "orc",
        "pdf",
        "docx",
        "doc",
        "xlsx",
        "xls",
        "pptx",
        "odt",
        "markdown",
        "md",
        "html",
        "txt",
        "rtf",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "webp",
        "svg",
        "heic",
        "tiff",
        "mp3",
        "mp4",
        "wav",
        "zip",
        "gzip",
        "gz",
        "tar",
        "tgz",
        "7z",
        "epub",
        "sqlite",
        "protobuf",
        "msgpack",
    ]
)
_PLACES = frozenset(
    [
        "production",
        "prod",
        "staging",
        "stage",
        "development",
        "dev",
        "test",
        "testing",
        "qa",
        "uat",
        "sandbox",
        "preview",
        "canary",
        "local",
        "localhost",
        "eu",
        "us",
        "uk",
        "emea",
        "apac",
        "latam",
        "europe",
        "asia",
        "africa",
        "americas",
        "oceania",
        "worldwide",
        "global",
        "onprem",
        "on-prem",
        "cloud",
    ]
)
_GROUP_NOUNS = frozenset(
    ["team", "squad", "group", "department", "dept", "org", "crew", "guild", "channel", "desk"]
)
# Words before a slot that make it the chosen instrument ("use X", "with X", "switch to X").
_CHOICE_WORDS = frozenset(["use", "us", "prefer", "via", "with", "choose", "pick", "adopt", "of"])
_MOVE_WORDS = frozenset(["switch", "migrat", "mov", "chang", "upgrad", "default"])
_MAX_SPAN = 3
_MAX_SPANS = 2

# Slot kinds that may stand for one another: a city and a region code are both places.
_KIN = {"name": "name", "place": "name", "team": "name"}


class Word(msgspec.Struct, frozen=True, array_like=True):
    """One canonical token: what is compared, what the reader wrote, and its value kind."""

    canon: str
    surface: str
    kind: str  # "word", "quantity:<dimension>", "number", "time", or "name"


class Statement(msgspec.Struct, frozen=True):
    """A lesson in canonical form: ordered words, their bag, content set and polarity.

    ``canons`` are the canonical strings in order; ``bag`` the same sorted (equal bags are the
    same lesson in other words); ``content`` the canonical tokens that carry topic;
    ``values`` those that can hold a slot value (see :func:`slot_kind`).
    """

    words: tuple[Word, ...]
    negative: bool
    canons: tuple[str, ...]
    bag: tuple[str, ...]
    content: frozenset[str]
    vocabulary: frozenset[str]  # every canonical token
    values: frozenset[str]  # canonical tokens that can hold a slot value on their own


class Change(msgspec.Struct, frozen=True):
    """One aligned span that differs between two statements, with the slot kind of both."""

    old: str
    new: str
    kind: str


def _stem(word: str) -> str:
    # Light and symmetric: "compressed", "compressing" and "compresses" meet at one stem.
    if not word.isalpha() or len(word) <= 3:
        return word
    word = _fold_plural(word)
    if word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) >= 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _number_words(lowered: list[str], start: int) -> tuple[float, int] | None:
    """Parse "five", "twenty five", "two hundred" at ``start``: (value, tokens used)."""
    total, current, used = 0.0, 0.0, 0
    for word in lowered[start:]:
        if word in _NUMBER_WORDS:
            current += _NUMBER_WORDS[word]
        elif word in _NUMBER_SCALES and (current or used == 0):
            scale = _NUMBER_SCALES[word]
            current = (current or 1.0) * scale
            if scale >= 1000:
                total, current = total + current, 0.0
        elif word == "and" and used and start + used + 1 < len(lowered):
            if lowered[start + used + 1] not in _NUMBER_WORDS:
                break
        else:
            break
        used += 1
    if not used or lowered[start] == "and":
        return None
    return total + current, used


def _quantity(value: float, unit: str | None) -> tuple[str, str]:
    """Canonical token and kind for a number with an optional unit."""
    if unit is None:
        return f"#{_format_number(value)}", "number"
    dimension, factor = _UNITS[unit]
    return f"#{_format_number(round(value * factor, 6))}{dimension}", f"quantity:{dimension}"


def _clock(hour: int, minute: int, half: str | None) -> str | None:
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "p" else 0)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"@{hour:02d}:{minute:02d}"


def _raw_tokens(text: str) -> tuple[str, list[tuple[int, int]]]:
    folded = _APOSTROPHES.sub("", unicodedata.normalize("NFKC", text))
    return folded, [match.span() for match in _RAW_TOKEN.finditer(folded)]


@lru_cache(maxsize=16384)
def statement(text: str) -> Statement:
    """Return ``text`` in canonical form for paraphrase and value-change comparison.

    Numbers in any spelling ("5GB", "5 GB", "five gigabytes") become one quantity token in base
    units; comparatives ("over", "more than", "larger than") one symbol; "every day", "daily"
    and "per day" one period; frequency adverbs ("always", "reliably") and fillers vanish;
    words are lightly stemmed; "Before X, do Y" is reordered to "do Y before X". Negation
    markers leave the sequence and set the polarity by their parity: "Never refund without a
    receipt" forbids what "Refund without a receipt" allows.
    """
    folded, spans = _raw_tokens(text)
    raw = [folded[start:end] for start, end in spans]
    lowered = [token.casefold() for token in raw]

    def written(first: int, used: int) -> str:
        return folded[spans[first][0] : spans[first + used - 1][1]]

    words: list[Word] = []
    negative = False
    position = 0
    count = len(raw)
    while position < count:
        low = lowered[position]
        surface = raw[position]
        # Phrases first: "no more than" is a bound, not a negation.
        matched = _match_phrase(lowered, position)
        if matched is not None:
            symbol, used = matched
            if symbol:
                words.append(Word(symbol, written(position, used), "word"))
            position += used
            continue
        if low == _NO_LONGER and position and lowered[position - 1] == "no":
            position += 1  # "no longer" is one negation, counted at its "no"
            continue
        if low in NEGATION_WORDS:
            negative = not negative
            position += 1
            continue
        parsed = _read_value(lowered, position)
        if parsed is not None:
            canon, kind, used = parsed
            words.append(Word(canon, written(position, used), kind))
            position += used
            continue
        period = _read_period(lowered, position)
        if period is not None:
            canon, used = period
            words.append(Word(canon, written(position, used), "time"))
            position += used
            continue
        if low in _FILLERS:
            position += 1
            continue
        if low in (",", ";"):
            words.append(Word(low, low, "break"))
            position += 1
            continue
        words.append(Word(_stem(low), surface, _shape_kind(surface, low, position)))
        position += 1
    ordered = _reorder_clauses(words)
    canons = tuple(word.canon for word in ordered)
    return Statement(
        words=ordered,
        negative=negative,
        canons=canons,
        bag=tuple(sorted(canons)),
        content=frozenset(c for c in canons if c and c not in STOP_WORDS and c[0] not in "<>"),
        vocabulary=frozenset(canons),
        values=frozenset(
            word.canon
            for position, word in enumerate(ordered)
            if slot_kind(ordered, position, position + 1) is not None
        ),
    )


def _match_phrase(lowered: list[str], position: int) -> tuple[str, int] | None:
    for length in range(min(_LONGEST_PHRASE, len(lowered) - position), 0, -1):
        symbol = _PHRASES.get(tuple(lowered[position : position + length]))
        if symbol is not None:
            return symbol, length
    return None


def _read_clock_word(low: str) -> str | None:
    """The canonical clock time one lowered token spells ("14:00", "2pm", "noon"), if any."""
    clock = _CLOCK.match(low) or _BARE_CLOCK.match(low)
    if clock:
        half = clock.group(3) if clock.re is _CLOCK else None
        canon = _clock(int(clock.group(1)), int(clock.group(2) or 0), half)
        if canon:
            return canon
    if low in ("noon", "midday", "midnight"):
        return "@12:00" if low != "midnight" else "@00:00"
    return None


def _read_value(lowered: list[str], position: int) -> tuple[str, str, int] | None:
    """A number, quantity or clock time at ``position``: (canonical, kind, tokens used)."""
    low = lowered[position]
    clock_time = _read_clock_word(low)
    if clock_time:
        return clock_time, "time", 1
    prefix_unit = None
    start = position
    if low in _PREFIX_UNITS and position + 1 < len(lowered):
        prefix_unit, position = low, position + 1
        low = lowered[position]
    unit = None
    used = 1
    match = _QUANTITY.match(low.replace(",", ""))
    if match:
        value = float(match.group(1))
        attached = match.group(2)
        if attached == _THOUSANDS:
            value, attached = value * 1000, None
        elif attached in ("am", "pm"):
            canon = _clock(int(value), 0, attached[0]) if value.is_integer() else None
            return (canon, "time", 1) if canon else None
        elif attached is not None and attached not in _UNITS:
            return None
        unit = attached
    else:
        spelled = _number_words(lowered, position)
        if spelled is not None:
            value, used = spelled
        elif low in ("a", "an") and _next_is_time_unit(lowered, position):
            value = 1.0
        else:
            return None
    after = position + used
    if unit is None and prefix_unit is None and after < len(lowered):
        following = lowered[after]
        if following in ("am", "pm", "a.m", "p.m") and value.is_integer():
            canon = _clock(int(value), 0, following[0])
            if canon:
                return canon, "time", after + 1 - start
        if following in _UNITS and following not in _ONE_LETTER_UNITS:
            unit, after = following, after + 1
        elif following == "per" and after + 1 < len(lowered) and lowered[after + 1] == "cent":
            unit, after = "percent", after + 2
    canon, kind = _quantity(value, unit or prefix_unit)
    return canon, kind, after - start


def _next_is_time_unit(lowered: list[str], position: int) -> bool:
    if position + 1 >= len(lowered):
        return False
    following = lowered[position + 1]
    previous = lowered[position - 1] if position else ""
    # "twice a day" is a rate, not one day.
    return (
        following in _UNITS
        and _UNITS[following][0] == "time"
        and previous not in ("once", "twice", "times", "thrice")
    )


def _read_period(lowered: list[str], position: int) -> tuple[str, int] | None:
    """A recurrence: "daily", "every day", "once a day", "per day" -> one period token."""
    low = lowered[position]
    if low in _PERIODS:
        return f"/{_PERIODS[low]}", 1
    used = 0
    while position + used < len(lowered) and lowered[position + used] in _PERIOD_LEADS:
        used += 1
    if used and position + used < len(lowered):
        noun = _PERIOD_NOUNS.get(_fold_plural(lowered[position + used]))
        if noun is not None and (used > 1 or low in ("every", "each", "per")):
            return f"/{noun}", used + 1
    return None


def _shape_kind(surface: str, low: str, position: int) -> str:
    """``name`` for tokens shaped like a proper noun, identifier or handle; else ``word``."""
    if surface[:1] in "@#" and len(surface) > 1:
        return "name"
    if low in _WEEKDAYS or _fold_plural(low) in _WEEKDAYS or low in _MONTHS or low in _DAY_PARTS:
        return "time"
    if low in _LANGUAGES:
        return "language"
    if low in _FORMATS or (low.startswith(".") and low[1:] in _FORMATS):
        return "format"
    if low in _PLACES or _REGION_SHAPE.match(low):
        return "place"
    if (_IDENTIFIER_SHAPE.search(low) and _HAS_DIGIT.search(low)) or "." in low or "+" in low:
        return "name"
    if position and surface[:1].isupper():
        return "name"
    if len(surface) >= 2 and any(ch.isupper() for ch in surface[1:]):
        return "name"  # PostgreSQL, GitHub, AWS
    return "word"


def _reorder_clauses(words: list[Word]) -> tuple[Word, ...]:
    """Move a leading subordinate clause behind its main clause and drop clause breaks."""
    if words and words[0].canon in _SUBORDINATORS:
        for position, word in enumerate(words):
            if word.kind == "break":
                words = words[position + 1 :] + words[:position]
                break
    return tuple(word for word in words if word.kind != "break")


def slot_kind(words: tuple[Word, ...], start: int, end: int) -> str | None:
    """The value kind of ``words[start:end]``, or None when the span is not one value.

    A span is a value when its tokens are a number or quantity (kind names the dimension),
    a time, a language, a file format, a place, or a name by shape; an ordinary word is a
    name when the word before it makes it the chosen instrument ("use X", "with X") or the
    word after it names a group ("the X team").
    """
    span = [word for word in words[start:end] if word.canon not in (">", "<", ">=", "<=")]
    if not span or end - start > _MAX_SPAN:
        return None
    kinds = {word.kind for word in span}
    quantities = {kind for kind in kinds if kind.startswith("quantity:") or kind == "number"}
    if quantities:
        if len(quantities) > 1 or not kinds <= quantities | {"word"}:
            return None
        return quantities.pop()
    if len(kinds) == 1 and (kind := next(iter(kinds))) != "word":
        return kind
    if len(span) == 1 and span[0].surface.isalpha() and span[0].canon not in STOP_WORDS - {"use"}:
        before = words[start - 1].canon if start else ""
        before_that = words[start - 2].canon if start > 1 else ""
        after = words[end].canon if end < len(words) else ""
        if after in _GROUP_NOUNS or before in _CHOICE_WORDS:
            return "name"
        if before == "to" and before_that in _MOVE_WORDS:
            return "name"
    return None


def aligned_spans(a: Statement, b: Statement) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The spans where ``a`` and ``b`` differ, as aligned ``((a_start, a_end), (b_start, b_end))``.

    Alignment is difflib's longest-matching-block alignment over canonical tokens; an insertion
    or deletion is a span that is empty on one side.
    """
    matcher = difflib.SequenceMatcher(None, a.canons, b.canons, autojunk=False)
    return [
        ((a_start, a_end), (b_start, b_end))
        for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes()
        if tag != "equal"
    ]


def value_changes(a: Statement, b: Statement) -> list[Change] | None:
    """The value slots that differ between two statements saying the same thing, or None.

    Both statements must have one polarity and agree everywhere except at most two short
    aligned spans, each holding a value of one kind on both sides, with shared content around
    them. ``a`` is the old statement, ``b`` the new one.
    """
    if a.negative != b.negative or not _may_hold_values(a, b):
        return None
    spans = aligned_spans(a, b)
    if not spans or len(spans) > _MAX_SPANS:
        return None
    changed = 0
    changes = []
    for (a_start, a_end), (b_start, b_end) in spans:
        if not (a_end - a_start and b_end - b_start):
            return None
        kind = slot_kind(a.words, a_start, a_end)
        if kind is None or not _same_kind(kind, slot_kind(b.words, b_start, b_end)):
            return None
        changed += max(a_end - a_start, b_end - b_start)
        changes.append(
            Change(
                old=_surface(a.words[a_start:a_end]),
                new=_surface(b.words[b_start:b_end]),
                kind=kind,
            )
        )
    shared = len(a.words) - sum(a_end - a_start for (a_start, a_end), _ in spans)
    shared_content = a.content & b.content
    if not shared_content or shared < changed:
        return None
    return changes


def _may_hold_values(a: Statement, b: Statement) -> bool:
    # Cheap necessary condition before aligning: each side owns a token that can be a value.
    return _owns_value(a, b) and _owns_value(b, a)


def _owns_value(a: Statement, b: Statement) -> bool:
    return any(
        value not in b.vocabulary or a.canons.count(value) > b.canons.count(value)
        for value in a.values
    )


def holds_value_change(a: Statement, b: Statement) -> bool:
    """True when any aligned differing span holds values of one kind on both sides.

    Such a pair is never a near-duplicate, whatever its embedding cosine says.
    """
    if not _may_hold_values(a, b):
        return False
    for (a_start, a_end), (b_start, b_end) in aligned_spans(a, b):
        if a_end - a_start and b_end - b_start:
            kind = slot_kind(a.words, a_start, a_end)
            if kind is not None and _same_kind(kind, slot_kind(b.words, b_start, b_end)):
                return True
    return False


def is_negation(a: Statement, b: Statement) -> bool:
    """True when two statements say the same thing with opposite polarity."""
    return a.negative != b.negative and bool(a.words) and a.bag == b.bag


def is_paraphrase(a: Statement, b: Statement) -> bool:
    """True when both statements have one polarity and the same bag of canonical tokens."""
    return a.negative == b.negative and bool(a.words) and a.bag == b.bag


def shares_core(a: Statement, b: Statement) -> bool:
    """True when two statements are about the same action on the same object.

    Their content overlap must cover at least half of the smaller statement: sharing one word
    ("refund … receipt" / "receipts are stored …") is a shared topic, not a shared action.
    """
    small = min(len(a.content), len(b.content))
    return small > 0 and len(a.content & b.content) * 2 >= small


def _same_kind(kind: str, other: str | None) -> bool:
    return other is not None and _KIN.get(kind, kind) == _KIN.get(other, other)


def _surface(words: tuple[Word, ...]) -> str:
    return " ".join(word.surface for word in words)
