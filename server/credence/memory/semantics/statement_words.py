"""The small word classes and patterns canonical statements are read with."""

from __future__ import annotations

import re

from credence.memory.semantics.tokens import BOUND_COMPARATIVES, SIGN_BEFORE

# Lessons are compared as canonical token sequences: fillers dropped, numbers and units folded
# to one quantity token, comparatives and periods to one symbol, light stemming, a leading
# subordinate clause moved behind its main clause. Equal bags are a paraphrase; sequences
# agreeing but for short aligned spans of values of one kind are a value change.

_RATIO_PATTERN = r"\d+(?::\d+)+"
RAW_TOKEN = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 10,000 or 1,250.5
    r"|\d{1,2}:\d{2}(?:\s?[apAP]\.?[mM]\.?)?"  # 14:00, 2:30pm, 2:30 PM
    rf"|{_RATIO_PATTERN}"  # a ratio: 1:2, 16:9
    rf"|{SIGN_BEFORE}\d+(?:\.\d+)?[a-z%]*"  # a signed number: -18, −5, -3.5c
    r"|[@#]?\w+(?:[.\-_/+]\w+)*[+#]*"  # words, versions, regions, next.js, c++, c#
    r"|[%$€£,;]",
)
RATIO = re.compile(rf"^{_RATIO_PATTERN}$")
QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)([a-z%$€£]+)?$")
CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\.?$")
BARE_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")
REGION_SHAPE = re.compile(r"^[a-z]{2,}(?:-[a-z]+)+-\d+[a-z]?$")
IDENTIFIER_SHAPE = re.compile(r"[a-z][.\-+_]|[.\-+_][a-z]|[a-z]\d|\d[a-z]|\+$")
HAS_DIGIT = re.compile(r"\d")
RANGE = re.compile(r"^(\d+(?:\.\d+)?)[-–](\d+(?:\.\d+)?)$")

NUMBER_WORDS = {
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
NUMBER_WORDS |= {
    word: 10 * (position + 2)
    for position, word in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    )
}
NUMBER_SCALES = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
# Spoken multiples ("twice" is "two times") and fractions ("half an hour", "a quarter of").
MULTIPLES = {"twice": 2, "thrice": 3}
TIMES = "times"
# Parts said in words; a third is no exact share ("33%"), so it stays a word.
FRACTIONS = {"half": 0.5, "quarter": 0.25, "fifth": 0.2, "tenth": 0.1}
ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")

# unit spelling -> (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, float]] = {}
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
    ("time", 14 * 86400.0, "fortnight fortnights"),
    # A month is a twelfth of a year, so "twelve months" is "a year" and "six months" half of one.
    ("time", 365 * 86400.0 / 12, "mo month months"),
    ("time", 365 * 86400.0, "y yr yrs year years"),
    ("time", 3650 * 86400.0, "decade decades"),
    ("time", 36500 * 86400.0, "century centuries"),
    ("percent", 1.0, "% percent pct"),
    ("usd", 1.0, "$ usd dollar dollars"),
    ("eur", 1.0, "€ eur euro euros"),
    ("gbp", 1.0, "£ gbp pound pounds"),
    ("cad", 1.0, "cad"),
    ("aud", 1.0, "aud"),
    ("metre", 1.0, "metre metres meter meters"),
    ("metre", 1000.0, "km kms kilometre kilometres kilometer kilometers"),
    ("metre", 0.01, "cm centimetre centimetres centimeter centimeters"),
    ("metre", 0.001, "mm millimetre millimetres millimeter millimeters"),
    ("metre", 1609.344, "mi mile miles"),
    ("metre", 0.3048, "ft foot feet"),
    ("metre", 0.0254, "inch inches"),
    ("gram", 1.0, "gram grams"),
    ("gram", 1000.0, "kg kgs kilo kilos kilogram kilograms"),
    ("gram", 0.001, "mg milligram milligrams"),
    ("gram", 453.59237, "lb lbs"),
    ("gram", 28.349523125, "oz ounce ounces"),
    ("litre", 1.0, "l litre litres liter liters"),
    ("litre", 0.001, "ml millilitre millilitres milliliter milliliters"),
    # Temperatures in degrees Celsius; Fahrenheit's zero sits 32 below (UNIT_OFFSETS).
    ("temperature", 1.0, "celsius"),
    ("temperature", 5 / 9, "fahrenheit"),
):
    for _spelling in _spellings.split():
        UNITS[_spelling] = (_dimension, _factor)
# Added to a value before its unit's factor: 68 °F is (68 - 32) × 5/9 = 20 °C.
UNIT_OFFSETS = {"fahrenheit": -32.0}
# The dimensions of UNITS that are money.
CURRENCIES = frozenset({"usd", "eur", "gbp", "cad", "aud"})
PREFIX_UNITS = frozenset({"$", "€", "£"})
# One-letter units count only when written onto the number ("30s", "2h"), never as a word.
ONE_LETTER_UNITS = frozenset({"k", "b", "s", "h", "d", "w", "y"})
# "k" after a bare number is a thousand ("10k rows"), not a kilobyte.
THOUSANDS = "k"
# Magnitude suffixes written onto a number ("1.5m rows", "2bn"): "m" is a million only here,
# since a bare "m" after a number is never read as minutes ("min" is).
MAGNITUDES = {THOUSANDS: 1000.0, "m": 1_000_000.0, "mn": 1_000_000.0, "bn": 1_000_000_000.0}

PERIODS = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "night",
    "weekly": "week",
    "fortnightly": "fortnight",
    "monthly": "month",
    "quarterly": "quarter",
    "yearly": "year",
    "annually": "year",
    "annual": "year",
}
_RECURRING = ("hour", "day", "night", "week", "fortnight", "month", "year")
PERIOD_NOUNS = {noun: noun for noun in _RECURRING} | {"evening": "night"}
PERIOD_LEADS = frozenset({"every", "each", "per", "a", "an", "once"})

# Phrases with one canonical symbol (some follow their value: "16 onward"); longest wins.
PHRASES: dict[tuple[str, ...], str] = {}
for _symbol, _phrases in (
    (
        ">",
        "over|above|beyond|exceeding|more than|larger than|bigger than|greater than|higher than"
        "|longer than|heavier than|older than|later than|in excess of|exceed|exceeds",
    ),
    ("<", "under|below|less than|smaller than|fewer than|shorter than|lower than|younger than"),
    (">=", "at least|no less than|not less than|no fewer than|or more|minimum of|a minimum of"),
    (">=", "onward|onwards|and up|and above|and over|and later|or later|or newer|or higher"),
    ("<=", "at most|up to|no more than|not more than|or less|or fewer|maximum of|a maximum of"),
    ("<=", "and below|and under|and earlier|or earlier|or older|or lower"),
    ("", "always|reliably|consistently|invariably|routinely|dependably|unfailingly|every time"),
    ("", "without fail|all the time|make sure to|make sure you|make sure|be sure to|remember to"),
    ("", "please|kindly|in general|generally|by default"),
):
    for _phrase in _phrases.split("|"):
        PHRASES[tuple(_phrase.split())] = _symbol
# "No later than" / "not more than": a bound, and its "no" negates nothing.
for _comparative, _symbol in BOUND_COMPARATIVES.items():
    for _negation in ("no", "not"):
        PHRASES[(_negation, _comparative, "than")] = _symbol
LONGEST_PHRASE = max(len(phrase) for phrase in PHRASES)

# Irregular English verb forms and their base form, so that "kept" meets "keep" and "led"
# meets "lead" as regular forms meet at their stem. A closed class of the grammar, not a list
# built from cases; forms that are also common nouns or values ("left", "found", "saw", "rose",
# "won", "bit", "shot") are left out, where folding would merge words that differ in meaning.
_IRREGULAR_LINES = """
be was were been
begin began begun
break broke broken
bring brought
build built
buy bought
catch caught
choose chose chosen
come came
deal dealt
die died dying dies
do did done does
draw drew drawn
drink drank
drive drove driven
eat ate eaten
fall fell fallen
feed fed
fight fought
flee fled
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
get got gotten
give gave given
go went gone goes
grow grew grown
have has had
hear heard
hide hid hidden
hold held
keep kept
know knew known
lead led
lend lent
lose lost
make made
mean meant
meet met
pay paid
ride rode ridden
ring rang rung
run ran
say said says
seek sought
sell sold
send sent
shake shook shaken
show shown
sing sang sung
sit sat
sleep slept
speak spoke spoken
spend spent
stand stood
steal stole stolen
stick stuck
strike struck
swim swam swum
take took taken
teach taught
tell told
think thought
throw threw thrown
tie tied tying ties
understand understood
wake woke woken
wear wore worn
write wrote written
"""
_IRREGULAR = [line.split() for line in _IRREGULAR_LINES.strip().splitlines()]
IRREGULAR_VERBS: dict[str, str] = {form: forms[0] for forms in _IRREGULAR for form in forms[1:]}
# Plurals no "s" rule reaches; "kids" and "children" are then one word, as "kid" and "child".
IRREGULAR_PLURALS: dict[str, str] = {
    "children": "child",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
    "geese": "goose",
}
# Simple past forms that differ from their base ("kept", "went"; "put" is both; not "has").
PAST_FORMS = frozenset(forms[1] for forms in _IRREGULAR if len(forms) > 1) - frozenset(
    forms[0] for forms in _IRREGULAR
) - {"has"} | {"were"}

# Words that carry no slot and no meaning a paraphrase must keep.
_FILLERS_TEXT = """
    a an the is are was were be been being am should must will shall would can could may might
    ought need needs has have had do does did that which who it its this these those you your we
    our us they their
"""
FILLERS = frozenset(_FILLERS_TEXT.split())
SUBORDINATORS = frozenset(
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

# Prepositions that open a phrase of detail ("for the frontend", "using the imperative mood").
PREPOSITIONS = frozenset(
    [
        "about",
        "across",
        "after",
        "at",
        "before",
        "between",
        "by",
        "during",
        "for",
        "from",
        "in",
        "inside",
        "into",
        "near",
        "on",
        "onto",
        "outside",
        "over",
        "per",
        "through",
        "to",
        "under",
        "using",
        "via",
        "with",
        "within",
        "without",
    ]
)

# Small generic classes of slot values (not lists of any one lesson's values).
WEEKDAYS = frozenset(
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
# In calendar order: a month's number is its place here.
MONTHS_IN_ORDER = (
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
)
MONTHS = frozenset(MONTHS_IN_ORDER)
DAY_PARTS = frozenset(["morning", "afternoon", "evening", "night", "noon", "midnight", "midday"])
LANGUAGES = frozenset(
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
FORMATS = frozenset(
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
        "excel",
        "spreadsheet",
        "powerpoint",
        "keynote",
        "latex",
        "plaintext",
        "asciidoc",
        "rst",
        "ics",
        "vcf",
        # Layouts a text is given in: a table is not a bulleted list, nor prose.
        "table",
        "tabular",
        "bullet",
        "bulleted",
        "paragraph",
        "prose",
        "numbered",
    ]
)
PLACES = frozenset(
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
GROUP_NOUNS = frozenset(
    ["team", "squad", "group", "department", "dept", "org", "crew", "guild", "channel", "desk"]
)
# Words before a slot that make it the chosen instrument ("use X", "with X", "switch to X").
CHOICE_WORDS = frozenset(["use", "us", "prefer", "via", "with", "choose", "pick", "adopt", "of"])
MOVE_WORDS = frozenset(["switch", "migrat", "mov", "chang", "upgrad", "default"])
MAX_SPAN = 3
MAX_SPANS = 2

# Slot kinds that may stand for one another: a city and a region code are both places, and an
# amount in dollars and one in euros are both prices ("20 USD" / "20 euros" is a value change).
KIN = {
    "name": "name",
    "place": "name",
    "team": "name",
    **{f"quantity:{currency}": "money" for currency in CURRENCIES},
}

# Common English abbreviations read as the word they shorten ("prod" is "production").
# One name for each way of writing a locale or a currency without a number ("US", "USA",
# "American", "en-US"; "euros", "EUR"), so that spellings of one value compare equal and two
# values compare as a change. Lowercase "us" is the pronoun: only "US" names the country.
SAME_VALUE_NAMES = {
    **dict.fromkeys(("us", "usa", "america", "american", "en-us"), "american"),
    **dict.fromkeys(("uk", "gb", "britain", "british", "en-gb"), "british"),
    # A currency's spellings in UNITS, but "pound": without a number it may be a weight.
    **{
        spelling: dimension
        for spelling, (dimension, _) in UNITS.items()
        if dimension in CURRENCIES and spelling.isalpha() and not spelling.startswith("pound")
    },
    "sterling": "gbp",
    **dict.fromkeys(("jpy", "yen"), "yen"),
}


def same_value_name(low: str, surface: str) -> str | None:
    """The one name of a locale or currency written ``surface`` (lowercased ``low``), or None."""
    if low == "us" and surface != "US":
        return None
    return SAME_VALUE_NAMES.get(low)


ABBREVIATIONS = {
    "prod": "production",
    "dev": "development",
    "db": "database",
    "dbs": "databases",
    "repo": "repository",
    "repos": "repositories",
    "config": "configuration",
    "configs": "configurations",
    "info": "information",
    "app": "application",
    "apps": "applications",
    "msg": "message",
    "msgs": "messages",
    "pic": "picture",
    "pics": "pictures",
    "admin": "administrator",
    "admins": "administrators",
    "env": "environment",
    "envs": "environments",
    "stats": "statistics",
    "cc": "copy",
    "tv": "television",
    "meds": "medications",
    # Words of an address, as the postal services abbreviate them; not "St" (Saint or Street),
    # "Dr" (Doctor or Drive) or "Ct" (Court or Connecticut).
    "ave": "avenue",
    "blvd": "boulevard",
    "rd": "road",
    "ln": "lane",
    "hwy": "highway",
    "pkwy": "parkway",
    "apt": "apartment",
    "ste": "suite",
    "bldg": "building",
    "dept": "department",
    # Months cut short (not "Jan", a name, "Mar" and "May", words, or "APR", a rate).
    **{month[:3]: month for month in ("february", "august", "october", "november", "december")},
}
