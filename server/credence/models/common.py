"""Types every API model shares: bounded strings, id patterns, enums and the problem body."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from msgspec import Meta, Struct

# Every string a client sends is bounded and free of NUL bytes; ids follow one slug grammar.
# Whole-string patterns end in (?!\n)$: in Python's re, which msgspec and Litestar match with,
# a bare $ also matches before a final newline, so "gamma\n" would pass as an id. The
# lookahead is valid ECMA-262 too, so the OpenAPI document says exactly what the server checks.
END = r"(?!\n)$"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}" + END
ID_PATTERN = r"^[a-z]{1,4}_[0-9a-z]{26}" + END
NO_NUL = r"^[^\x00]*$"
# Whitespace spelled out, never \s: Python's \s (what the server matches with) also covers
# \x1c-\x1f and \x85, ECMA-262's (what fuzzers and generated clients read) covers \ufeff. A
# pattern written with \s therefore let a fuzzer send "\x1e" as a valid belief that the server
# refused; this class is the union of both, so the two readings agree.
WHITESPACE = r"\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
MAX_SAFE_INT = 2**53

AgentId = Annotated[str, Meta(pattern=SLUG_PATTERN, description="Agent slug: a-z, 0-9, _ and -")]
ObjectId = Annotated[str, Meta(pattern=ID_PATTERN, max_length=31)]
Label = Annotated[str, Meta(max_length=200, pattern=NO_NUL)]
ShortText = Annotated[str, Meta(max_length=2000, pattern=NO_NUL)]


def visible_text(refused: str) -> str:
    """The pattern of a text with none of the ``refused`` characters (a character-class body)
    anywhere and at least one character that is not whitespace."""
    return rf"^[^{refused}]*[^{refused}{WHITESPACE}][^{refused}]*" + END


# A belief has a visible character and no NUL anywhere.
BeliefText = Annotated[str, Meta(min_length=1, max_length=2000, pattern=visible_text(r"\x00"))]
Timestamp = Annotated[datetime, Meta(tz=True, description="RFC 3339 date-time with an offset")]
# Stored timestamps go out as the RFC 3339 text they are kept as (clock.rfc3339).
TimestampText = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
Confidence = Annotated[float, Meta(ge=0.0, le=1.0)]
Trigger = Literal["steer", "denial", "followup"]
Origin = Literal["clean", "untrusted"]
Provenance = Literal["clean", "untrusted", "owner", "unsourced", "imported"]
BeliefStatus = Literal["pending", "active", "forgotten", "superseded"]
BeliefOp = Literal["add", "strengthen", "weaken", "forget", "supersede"]
Scope = Literal["admin", "reviewer", "agent"]
# Rules that span fields go in a Struct's ``json_schema_rules``, merged into its schema by
# openapi_doc (the handlers enforce them with a 422). They use if/then/else and not, which fuzzers
# follow and client generators ignore: a oneOf would split the generated model into variants.
ReflectorName = Literal["heuristic", "llm", "stub"]


def _cron_field(value: str, *alone: str) -> str:
    """One cron field: a list of values, ranges and steps, or one of the ``alone`` tokens."""
    item = rf"(?:\*|{value}(?:-{value})?)(?:/[1-9][0-9]?)?"
    return "(?:" + "|".join([rf"{item}(?:,{item})*", *alone]) + ")"


def _names(*names: str) -> str:
    return "|".join([*names, *(name.upper() for name in names)])


_DAYS = _names("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_MONTHS = _names(
    *["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
)
# Five cron fields (minute hour day-of-month month day-of-week) with values in range: stars,
# numbers and names, ranges, steps, lists, and croniter's ? L and # alone. A schedule with no fire
# time (31 February) still parses; the server refuses it with a 422.
CRON_PATTERN = (
    "^"
    + " ".join(
        (
            _cron_field("(?:[0-9]|[1-5][0-9])"),
            _cron_field("(?:[0-9]|1[0-9]|2[0-3])"),
            _cron_field("(?:[1-9]|[12][0-9]|3[01])", r"\?", "L"),
            _cron_field(f"(?:[1-9]|1[0-2]|{_MONTHS})"),
            _cron_field(f"(?:[0-7]|{_DAYS})", r"\?", "[0-7]#[1-5]"),
        )
    )
    + END
)


class ValidationIssue(Struct, frozen=True, kw_only=True):
    """One reason a request failed validation."""

    message: str
    key: str | None = None
    source: str | None = None


class ProblemExtra(Struct, frozen=True, kw_only=True):
    """Details of an error; which keys appear depends on the error (others may follow)."""

    current_etag: (
        Annotated[str, Meta(description='412 and 428: the belief\'s current ETag, e.g. "3"')] | None
    ) = None
    info: str | None = None


class Problem(Struct, frozen=True):
    """The JSON body of every error response."""

    status_code: int
    detail: str
    extra: ProblemExtra | list[ValidationIssue] | None = None
