"""Acronyms one side writes and the other spells out: "HR" / "human resources", "PR" / "pull
request"."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from credence.memory.semantics.tokens import STOP_WORDS

# Two to six capitals standing alone: "HR", "DMV", "CI". Not a word in capitals for emphasis,
# which a sentence of capitals would hold many of; those are rare in beliefs and stay apart.
_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
# Small words an acronym skips: "Department of Motor Vehicles" is "DMV".
_SKIPPED: Final = ("of", "and", "the", "for", "&")
# The fewest letters a spelled-out word has.
_MIN_LETTERS: Final = 3


# Acronyms common in what an assistant remembers (work, money, health, travel, places), with
# what each is spelled out as. One side writing the acronym and the other these words say one
# thing however far apart the sentence model puts them: it reads "PR" and "2FA" poorly. Only
# acronyms written in capitals count ("it" is no "IT"); "PM" and "AM" are clock times.
KNOWN_ACRONYMS: Final = {
    "PR": ("pull request", "public relations", "personal record"),
    "CI": ("continuous integration",),
    "CD": ("continuous delivery", "continuous deployment"),
    "QA": ("quality assurance",),
    "UX": ("user experience",),
    "UI": ("user interface",),
    "API": ("application programming interface",),
    "OS": ("operating system",),
    "DB": ("database",),
    "VPN": ("virtual private network",),
    "SSO": ("single sign-on",),
    "2FA": ("two-factor authentication",),
    "MFA": ("multi-factor authentication",),
    "SLA": ("service level agreement",),
    "KPI": ("key performance indicator",),
    "OKR": ("objectives and key results",),
    "HR": ("human resources",),
    "IT": ("information technology",),
    "CEO": ("chief executive officer",),
    "CTO": ("chief technology officer",),
    "CFO": ("chief financial officer",),
    "COO": ("chief operating officer",),
    "VP": ("vice president",),
    "PTO": ("paid time off",),
    "WFH": ("work from home", "working from home"),
    "OOO": ("out of office",),
    "EOD": ("end of day", "end of the day"),
    "ETA": ("estimated time of arrival",),
    "FAQ": ("frequently asked questions",),
    "ASAP": ("as soon as possible",),
    "CV": ("curriculum vitae",),
    "HSA": ("health savings account",),
    "FSA": ("flexible spending account",),
    "IRA": ("individual retirement account",),
    "ETF": ("exchange-traded fund",),
    "CPA": ("certified public accountant",),
    "ATM": ("automated teller machine", "cash machine"),
    "PIN": ("personal identification number",),
    "SSN": ("social security number",),
    "DOB": ("date of birth",),
    "HOA": ("homeowners association", "homeowners' association"),
    "GPA": ("grade point average",),
    "MBA": ("master of business administration",),
    "BP": ("blood pressure",),
    "BMI": ("body mass index",),
    "ADHD": ("attention deficit hyperactivity disorder",),
    "ER": ("emergency room",),
    "ICU": ("intensive care unit",),
    "GP": ("general practitioner", "family doctor"),
    "PT": ("physical therapy", "physical therapist"),
    "AC": ("air conditioning", "air conditioner"),
    "EV": ("electric vehicle", "electric car"),
    "SUV": ("sport utility vehicle",),
    "TV": ("television",),
    "DMV": ("department of motor vehicles",),
    "IRS": ("internal revenue service",),
    "NHS": ("national health service",),
    "NIH": ("national institutes of health",),
    "CDC": ("centers for disease control",),
    "TSA": ("transportation security administration",),
    "UK": ("united kingdom",),
    "US": ("united states",),
    "USA": ("united states of america", "united states"),
    "EU": ("european union",),
    "UN": ("united nations",),
    "NYC": ("new york city",),
    "UTC": ("coordinated universal time",),
    "GMT": ("greenwich mean time",),
    "CET": ("central european time",),
    "EST": ("eastern standard time",),
    "PST": ("pacific standard time",),
}


# Any known acronym as written, in capitals, perhaps plural ("PR", "PRs"): one pass per text.
_KNOWN_WRITTEN = re.compile(
    rf"(?<![\w-])({'|'.join(sorted(map(re.escape, KNOWN_ACRONYMS), key=len, reverse=True))})"
    r"s?(?![\w-])"
)


@lru_cache(maxsize=16384)
def _known_in(text: str) -> frozenset[str]:
    return frozenset(_KNOWN_WRITTEN.findall(text))


@lru_cache(maxsize=4096)
def _known_spelled_out(acronym: str) -> re.Pattern[str]:
    """What ``acronym`` is known to stand for, in any case, a hyphen or a space between words,
    perhaps plural."""
    forms = (
        r"[\s-]+".join(re.escape(word) for word in re.split(r"[\s-]+", expansion))
        for expansion in KNOWN_ACRONYMS[acronym]
    )
    return re.compile(rf"\b(?:{'|'.join(forms)})(s?)\b", re.IGNORECASE)


def _known_abbreviated(side: str, other: str) -> str:
    """``side`` with what a known acronym stands for put as the acronym, when ``other``
    writes that acronym and ``side`` does not."""
    for acronym in sorted(_known_in(other) - _known_in(side)):
        side = _known_spelled_out(acronym).sub(rf"{acronym}\1", side)
    return side


@lru_cache(maxsize=4096)
def _spelled_out(acronym: str) -> re.Pattern[str]:
    """Words whose first letters are the acronym's, in order, small words skipped between."""
    skipped = "|".join(re.escape(word) for word in _SKIPPED)
    gap = rf"(?:\s+(?:{skipped}))*\s+"
    words = [rf"{letter}[a-z]{{{_MIN_LETTERS - 1},}}" for letter in acronym.lower()]
    return re.compile(r"\b" + gap.join(words) + r"\b", re.IGNORECASE)


@lru_cache(maxsize=16384)
def _acronyms(text: str) -> frozenset[str]:
    return frozenset(_ACRONYM.findall(text))


def _abbreviated(side: str, other: str) -> str:
    """``side`` with each acronym only ``other`` writes put in place of its spelled-out words,
    when those are words of meaning ("has rules" spells no "HR")."""
    for acronym in sorted(_acronyms(other) - _acronyms(side)):
        for match in _spelled_out(acronym).finditer(side):
            words = match.group().casefold().split()
            if all(word in _SKIPPED or word not in STOP_WORDS for word in words):
                side = side[: match.start()] + acronym + side[match.end() :]
                break
    return side


def acronyms_written_alike(old: str, new: str, *, by_initials: bool) -> tuple[str, str]:
    """The two texts with words one spells out put as the acronym the other writes, so an
    acronym is read as the words it stands for: always for the acronyms known here ("pull
    request" / "PR"), and with ``by_initials`` for any whose initials the words spell ("the
    Department of Motor Vehicles" / "the DMV"), which only the caller can tell is meant."""
    old, new = _known_abbreviated(old, new), _known_abbreviated(new, old)
    if not by_initials or _acronyms(old) == _acronyms(new):
        return old, new  # no acronym, or the same ones: nothing spelled out to fold
    return _abbreviated(old, new), _abbreviated(new, old)
