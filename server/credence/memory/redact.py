"""Secret redaction: replace credentials in text before it is stored, logged, embedded or sent."""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import msgspec
import re2

__all__ = [
    "REDACTION_SECRET",
    "RULES",
    "Redaction",
    "Rule",
    "looks_like_secret",
    "redact",
    "redact_value",
]

# The store's name for the per-installation key of placeholder digests.
REDACTION_SECRET = "redaction"


class Redaction(msgspec.Struct, frozen=True):
    """The result of redacting one text."""

    text: str  # redacted text
    count: int  # number of secrets replaced
    rules: tuple[str, ...]  # rule slug per replacement, in order of appearance (may repeat)


def _compile(pattern: bytes) -> Any:
    # Latin-1 mode over UTF-8 bytes: every class below is either pure ASCII or takes all high
    # bytes, so spans always fall on character boundaries, and lone surrogates (encoded with
    # surrogatepass) reach the matcher as plain bytes instead of failing.
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    return re2.compile(pattern, options)


_PLACEHOLDER = _compile(rb"\[REDACTED:[a-z0-9_]{1,32}:[0-9a-f]{8}\]")
_TEMPLATE_STARTS = ("$", "{", "<", "%")  # ${TOKEN}, {{ secret }}, <password>, %(pw)s

# --- judging values -----------------------------------------------------------------------

_LOWER = frozenset(string.ascii_lowercase)
_UPPER = frozenset(string.ascii_uppercase)
_DIGITS = frozenset(string.digits)
_ALPHANUMERIC = _LOWER | _UPPER | _DIGITS
MIN_SECRET_LENGTH = 8
# A value longer than any password is judged by its beginning, which keeps judging cheap and lets
# the stdlib engine run the shape checks: bounded input, no ambiguous repetition.
_JUDGED_LENGTH = 1024
_WORDISH = re.compile(r"[(\[]?[A-Za-z]+(?:[_.\-][A-Za-z]+)*[.!?:)\]]*")  # "expired." too
_CODEISH = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.[A-Za-z_$][\w$]*)+(?:[(\[].*)?|[(\[].*)", re.ASCII)
_PATHISH = re.compile(r"~?/|\.\.?/|[A-Za-z]:\\")


_N_LOG2_N = tuple(n * math.log2(n) if n else 0.0 for n in range(_JUDGED_LENGTH + 1))


def _shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` (at most _JUDGED_LENGTH characters) in bits per character."""
    # H = log2(L) - sum(n * log2(n)) / L over the count n of each distinct character.
    length = len(value)
    return math.log2(length) - sum(map(_N_LOG2_N.__getitem__, Counter(value).values())) / length


def _character_classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters ``value`` uses."""
    chars = set(value)
    return (
        (not chars.isdisjoint(_LOWER))
        + (not chars.isdisjoint(_UPPER))
        + (not chars.isdisjoint(_DIGITS))
        + bool(chars - _ALPHANUMERIC)
    )


def looks_like_secret(value: str) -> bool:
    """Whether a value given to a secret-sounding key is random enough to be a real secret.

    Ordinary words and identifiers (``reset``, ``confidential``, ``YOUR_API_KEY``), code
    (``os.environ.get(...)``), paths, URLs, template placeholders and redaction placeholders are
    not; ``Xy7#kP9$mQ2!`` and ``changeme123`` are.
    """
    if len(value) < MIN_SECRET_LENGTH or value.startswith(_TEMPLATE_STARTS):
        return False
    sample = value[:_JUDGED_LENGTH]
    if "://" in sample or "[REDACTED:" in sample or _character_classes(sample) < 2:
        return False
    if _WORDISH.fullmatch(sample) or _CODEISH.fullmatch(sample) or _PATHISH.match(sample):
        return False
    # 8 or 9 characters cannot reach 3 bits per character unless nearly all differ, so for them
    # the bar is relative to the most their length allows.
    return _shannon_entropy(sample) >= min(3.0, math.log2(len(sample)) - 0.3)


def _has_letter_and_digit(value: str) -> bool:
    chars = set(value)
    return not chars.isdisjoint(_DIGITS) and not chars.isdisjoint(_LOWER | _UPPER)


# --- rules --------------------------------------------------------------------------------

Span = tuple[int, int]
# Narrows one match (data, start, end) to the span of its secret, or rejects it with None.
SecretSpan = Callable[[bytes, int, int], Span | None]


def _whole(data: bytes, start: int, end: int) -> Span | None:
    return start, end


def _text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", "surrogatepass")


def _checked(check: Callable[[str], bool]) -> SecretSpan:
    """The whole match, if ``check`` accepts it."""

    def span(data: bytes, start: int, end: int) -> Span | None:
        return (start, end) if check(_text(data, start, end)) else None

    return span


# Run with the stdlib engine on one match at a time: bounded input, and no ambiguity to backtrack
# over, as the key before the separator holds no ':' or '='.
_THROUGH_SEPARATOR = re.compile(rb"[^:=]*(?::=|=>|[:=])[ \t]*\\?[\"'`]?")


def _after_separator(data: bytes, start: int, end: int) -> int:
    """Where the value begins in a ``key Q SEP Q value`` match (see the patterns below).

    Keys hold no ':' or '=', and a value never starts with a quote, a blank, ':', '=' or '>', so
    the first ':' or '=' opens the separator and the value starts right after it, its blanks and
    its quote: the patterns need no capture groups, which lets RE2 match with its DFA alone.
    """
    return _THROUGH_SEPARATOR.match(data, start, end).end()  # type: ignore[union-attr]


def _value(check: Callable[[str], bool] | None = None) -> SecretSpan:
    """The value of a ``key: value`` match, if ``check`` (when given) accepts it."""

    def span(data: bytes, start: int, end: int) -> Span | None:
        value_start = _after_separator(data, start, end)
        if check is not None and not check(_text(data, value_start, end)):
            return None
        return value_start, end

    return span


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of secret: its slug, a pattern for the match, and how to find the secret in it.

    ``not_followed_by`` stands in for the lookahead RE2 lacks: a match followed by one more of
    those characters is no match, which keeps fixed-length formats (43 characters after crd_, a
    40-character AWS secret) from matching the start of a longer run.
    """

    slug: str
    regex: Any
    secret: SecretSpan = _whole
    not_followed_by: frozenset[int] = frozenset()
    # Every match holds one of these (in any case when ignore_case): a rule none of whose
    # literals is in the text is skipped without running its pattern.
    needs: tuple[bytes, ...] = ()
    ignore_case: bool = False
    # Run only where the whole pattern matches somewhere, which the one pass over the literal
    # set tells too: for the many vendor formats, text full of their prefixes then costs one
    # pass, not one per format.
    prefilter_whole: bool = False


_TOKEN_CHARS = frozenset((string.ascii_letters + string.digits + "_-").encode())
_BASE64_CHARS = frozenset((string.ascii_letters + string.digits + "/+=").encode())
_Q = rb"(?:\\?[\"'`])?"  # an optional quote, also JSON-escaped (\") as in logged JSON strings
_SEP = rb"[ \t]{0,4}(?::=|=>|[:=])[ \t]{0,4}"
# A value runs to whitespace, a quote, a comma or a semicolon; its first character is not one a
# separator could have taken, so where the value starts is never ambiguous.
_VALUE = rb"[^\s\"'`,;\\:=>][^\s\"'`,;\\]{%d,}" % (MIN_SECRET_LENGTH - 1)
# A key that names a secret: *password*, *secret*, *token*, *api_key*, ... and "pass" only as a
# word of its own (DB_PASS), so that "bypass" and "compass" stay out.
_SECRET_KEY_NAME = (
    rb"(?i:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key"
    rb"|credentials?|(?:\b|[_.\-])pass)(?i:[_\-]?(?:key|value|hash))?"
)
_AUTH_SCHEME = rb"(?i:bearer|basic|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256)[ \t]+"
_AUTH_SCHEME_PREFIX = re.compile(_AUTH_SCHEME)  # stdlib: bounded input, a plain alternation


def _authorization_secret(data: bytes, start: int, end: int) -> Span | None:
    value_start = _after_separator(data, start, end)
    scheme = _AUTH_SCHEME_PREFIX.match(data, value_start, end)
    if scheme is not None and scheme.end() < end:
        # An explicit scheme (Bearer, Basic, ...) says what follows is a credential.
        value = _text(data, scheme.end(), end)
        if value.startswith(_TEMPLATE_STARTS) or len(value) < 4:
            return None
        return scheme.end(), end
    return (value_start, end) if looks_like_secret(_text(data, value_start, end)) else None


def _url_password(data: bytes, start: int, end: int) -> Span | None:
    # Neither the scheme nor the user holds a ':', so the password starts after the second one;
    # the match ends with the '@'.
    scheme_colon = data.index(b":", start)
    return data.index(b":", scheme_colon + 3) + 1, end - 1


def _slack_webhook_path(data: bytes, start: int, end: int) -> Span | None:
    # The path after /services/ (or /workflows/, /triggers/) is the secret.
    return data.index(b"/", start + len(b"https://hooks.slack.com/")) + 1, end


def _token(slug: str, pattern: bytes, *needs: bytes, exact: bool = False) -> Rule:
    """A rule for a token format that announces itself (a vendor prefix, a fixed shape).

    ``exact`` marks fixed-length formats: a match followed by one more token character is the
    start of some longer run (an id, a hash), not the token.
    """
    return Rule(
        slug,
        _compile(pattern),
        not_followed_by=_TOKEN_CHARS if exact else frozenset(),
        needs=needs,
        prefilter_whole=True,
    )


# Vendor token formats, after gitleaks' default rules and detect-secrets' plugins (patterns of
# our own, each anchored on its vendor prefix or shape, so ids, hashes and UUIDs never match).
_VENDOR_TOKENS: tuple[Rule, ...] = (
    _token("npm_token", rb"\bnpm_[A-Za-z0-9]{36}", b"npm_", exact=True),
    # A PyPI token is a macaroon: "pypi-" and base64 that starts with its version byte.
    _token("pypi_token", rb"\bpypi-AgE[A-Za-z0-9_\-]{60,}", b"pypi-AgE"),
    _token("sendgrid_key", rb"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", b"SG.", exact=True),
    _token("twilio_api_key", rb"\bSK[0-9a-f]{32}\b", b"SK"),
    _token(
        "shopify_token",
        rb"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        b"shpat_",
        b"shpca_",
        b"shppa_",
        b"shpss_",
        exact=True,
    ),
    _token("google_oauth_secret", rb"\bGOCSPX-[A-Za-z0-9_\-]{28}", b"GOCSPX-", exact=True),
    _token(
        "azure_client_secret",
        rb"\b[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
        b"Q~",
        exact=True,
    ),
    _token("huggingface_token", rb"\bhf_[A-Za-z]{34}", b"hf_", exact=True),
    _token(
        "digitalocean_token",
        rb"\bdo[opr]_v1_[a-f0-9]{64}",
        b"dop_v1_",
        b"doo_v1_",
        b"dor_v1_",
        exact=True,
    ),
    _token("mailchimp_key", rb"\b[0-9a-f]{32}-us[0-9]{1,2}\b", b"-us"),
    # Inside a URL (api.telegram.org/bot<token>/) no word boundary precedes the digits.
    _token("telegram_bot_token", rb"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}", b":AA", exact=True),
    _token("square_token", rb"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}", b"sq0atp-", b"sq0csp-"),
    _token("databricks_token", rb"\bdapi[a-f0-9]{32}(?:-[0-9])?", b"dapi", exact=True),
    _token("vault_token", rb"\bhv[sb]\.[A-Za-z0-9_\-]{90,}", b"hvs.", b"hvb."),
    _token(
        "age_secret_key",
        rb"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        b"AGE-SECRET-KEY-1",
    ),
    _token("atlassian_token", rb"\bATATT3[A-Za-z0-9_\-=]{150,}", b"ATATT3"),
    _token("linear_key", rb"\blin_api_[A-Za-z0-9]{40}", b"lin_api_", exact=True),
    _token("postman_key", rb"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}", b"PMAK-", exact=True),
    _token("pulumi_token", rb"\bpul-[a-f0-9]{40}", b"pul-", exact=True),
    _token(
        "grafana_token",
        rb"\b(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
        b"glc_",
        b"glsa_",
    ),
    _token("newrelic_key", rb"\bNRAK-[A-Z0-9]{27}", b"NRAK-", exact=True),
    _token(
        "sentry_token",
        rb"\b(?:sntrys_eyJ[A-Za-z0-9+/=_\-]{60,}|sntryu_[a-f0-9]{64})",
        b"sntrys_",
        b"sntryu_",
    ),
    _token("doppler_token", rb"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", b"dp."),
    _token("planetscale_token", rb"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.\-]{32,64}", b"pscale_"),
    _token("flyio_token", rb"\bfo1_[A-Za-z0-9_\-]{43}", b"fo1_", exact=True),
    _token("notion_token", rb"\bntn_[0-9]{11}[A-Za-z0-9]{35}", b"ntn_", exact=True),
    _token("heroku_key", rb"\bHRKU-[A-Za-z0-9_\-]{60}", b"HRKU-", exact=True),
    _token("dynatrace_token", rb"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}", b"dt0c01.", exact=True),
    _token("alibaba_key", rb"\bLTAI[A-Za-z0-9]{20}\b", b"LTAI"),
    _token("onepassword_token", rb"\bops_eyJ[A-Za-z0-9+/=_\-]{200,}", b"ops_eyJ"),
    _token("docker_hub_token", rb"\bdckr_pat_[A-Za-z0-9_\-]{27}", b"dckr_pat_", exact=True),
    _token("terraform_token", rb"\b[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}", b".atlasv1."),
    _token("supabase_token", rb"\bsbp_[a-f0-9]{40}", b"sbp_", exact=True),
    _token("airtable_token", rb"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}", b"pat", exact=True),
    _token("artifactory_key", rb"\bAKCp[A-Za-z0-9]{69}", b"AKCp", exact=True),
    _token("cloudflare_ca_key", rb"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}", b"v1.0-", exact=True),
)


# The order is the priority. Each rule runs on the text as the rules before it left it, so it sees
# their placeholders, never their secrets; a later rule never relabels an earlier one's secret.
# Specific formats come first (anthropic before openai), then the rules whose acceptance looks
# at a match's content or its next character (openai, credence, aws secret), and the rules that
# read a secret from its context (a URL, a header, a key) last. That order is also what makes a
# second pass find nothing: a rule's verdict could otherwise change once a later rule's secret
# next to it, or inside what it rejected, became a placeholder.
RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        # The body may hold single dashes (DEK-Info: AES-128-CBC) but never "--", so a BEGIN with
        # no END gives up at the next dashes instead of scanning the rest of the text each time;
        # a truncated key (no END) is still redacted through its base64 lines (indented, or with
        # escaped newlines as in logged JSON), if it has any.
        _compile(
            rb"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            rb"(?:(?:[^-]|-[^-])*-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            rb"|(?:\s|\\[nr])*[A-Za-z0-9+/=]{16}(?:\n[ \t]+|[A-Za-z0-9+/=\\\r\n])*)"
        ),
        needs=(b"-----BEGIN ",),
    ),
    Rule(
        "jwt",
        _compile(rb"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*"),
        needs=(b"eyJ",),
    ),
    Rule("anthropic_key", _compile(rb"\bsk-ant-[A-Za-z0-9_\-]{20,}"), needs=(b"sk-ant-",)),
    Rule(
        "stripe_key",
        _compile(rb"\b(?:[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{32,})"),
        needs=(b"k_live_", b"k_test_", b"whsec_"),
    ),
    Rule(
        "github_token",
        _compile(rb"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        needs=(b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_", b"github_pat_"),
    ),
    Rule(
        "gitlab_token",
        _compile(
            rb"\b(?:gl(?:pat|ptt|dt|rt|ft|imt|oas|soat|cbt|ffct|agent)-[A-Za-z0-9_\-]{20,}"
            rb"|GR1348941[A-Za-z0-9_\-]{20,})"
        ),
        needs=(
            *(b"gl%s-" % kind for kind in (b"pat", b"ptt", b"dt", b"rt", b"ft", b"imt", b"oas")),
            *(b"gl%s-" % kind for kind in (b"soat", b"cbt", b"ffct", b"agent")),
            b"GR1348941",
        ),
    ),
    Rule(
        "slack_webhook",
        _compile(
            rb"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{8,}"
        ),
        _slack_webhook_path,
        needs=(b"https://hooks.slack.com/",),
    ),
    Rule(
        "slack_token",
        _compile(rb"\b(?:xox[abeoprs]|xapp)-[A-Za-z0-9\-]{10,}"),
        needs=(b"xox", b"xapp-"),
    ),
    Rule("aws_access_key", _compile(rb"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), needs=(b"AKIA", b"ASIA")),
    Rule("google_api_key", _compile(rb"\bAIza[0-9A-Za-z_\-]{35,}"), needs=(b"AIza",)),
    *_VENDOR_TOKENS,
    Rule(
        "openai_key",
        _compile(rb"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        _checked(_has_letter_and_digit),  # not a hyphenated slug like sk-this-is-not-a-key,
        needs=(b"sk-",),
    ),
    Rule(
        "credence_key",
        _compile(rb"\bcrd_[A-Za-z0-9_\-]{43}"),
        not_followed_by=_TOKEN_CHARS,
        needs=(b"crd_",),
    ),
    Rule(
        "aws_secret_key",
        _compile(
            rb"(?i:aws[_.\-]?secret[_.\-]?(?:access[_.\-]?)?key|secret[_.\-]?access[_.\-]?key)"
            + _Q
            + _SEP
            + _Q
            + rb"[A-Za-z0-9/+]{40}"
        ),
        _value(),
        not_followed_by=_BASE64_CHARS,
        needs=(b"secret",),
        ignore_case=True,
    ),
    Rule(
        "azure_storage_key",
        # A connection string's AccountKey= (storage) or SharedAccessKey= (Service Bus, Event
        # Hubs, IoT Hub): base64 of 32 or 64 bytes.
        _compile(rb"(?i:\b(?:account|sharedaccess)key)=[A-Za-z0-9+/]{40,100}={0,2}"),
        _value(),
        not_followed_by=_BASE64_CHARS,
        needs=(b"accountkey=", b"sharedaccesskey="),
        ignore_case=True,
    ),
    Rule(
        "url_credentials",
        # The password may hold a raw '@' (the last one ends it) but never '/', '?', '#' or
        # whitespace, which end the authority.
        _compile(rb"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/?#@\[\]\"'<>]{0,128}:[^\s/?#\"'<>]+@"),
        _url_password,
        needs=(b"://",),
    ),
    Rule(
        "authorization",
        _compile(
            rb"(?i:\b(?:proxy-)?authorization)"
            + _Q
            + _SEP
            + _Q
            + rb"(?:"
            + _AUTH_SCHEME
            + rb"[^\s\"'`,;\\]+|[^\s\"'`,;\\:=>][^\s\"'`,;\\]*)"
        ),
        _authorization_secret,
        needs=(b"authorization",),
        ignore_case=True,
    ),
    Rule(
        "generic_secret",
        _compile(_SECRET_KEY_NAME + _Q + _SEP + _Q + _VALUE),
        _value(looks_like_secret),
        needs=(b"pass", b"secret", b"token", b"key", b"credential"),
        ignore_case=True,
    ),
)

_SECRET_KEY = _compile(rb"(?i)^[A-Za-z0-9_.\-]*" + _SECRET_KEY_NAME + rb"$")
_AUTHORIZATION_KEY = _compile(rb"(?i)^(?:proxy-)?authorization$")


def _literal_set() -> tuple[Any, tuple[frozenset[int], ...]]:
    """One RE2 set of every rule's literals (one pass tells which rules can match at all)."""
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    literals = re2.Set.SearchSet(options)
    literals.Add(b"(?:)")  # matches every text, so "no answer" can only mean the set failed
    ids = []
    for rule in RULES:
        if rule.prefilter_whole:
            ids.append(frozenset((literals.Add(rule.regex.pattern),)))
            continue
        flags = b"(?i)" if rule.ignore_case else b""
        escaped = (flags + re2.escape(n.decode("latin-1")).encode("latin-1") for n in rule.needs)
        ids.append(frozenset(literals.Add(pattern) for pattern in escaped))
    literals.Compile()
    return literals, tuple(ids)


_LITERALS, _RULE_LITERALS = _literal_set()

# --- redacting ----------------------------------------------------------------------------

_RESERVED = ""  # the "slug" of placeholders that were in the text already: left alone, not counted

# A placeholder in the current text: start, end, slug (or _RESERVED).
_Mark = tuple[int, int, str]


def _placeholder(slug: str, secret: bytes, digest_key: bytes) -> bytes:
    # Keyed: an unsalted hash would let anyone holding the text confirm a guessed password
    # offline. Within one installation the same secret keeps its placeholder, so redacted
    # episodes still correlate.
    digest = hmac.new(digest_key, secret, hashlib.sha256).hexdigest()[:8]
    return f"[REDACTED:{slug}:{digest}]".encode()


def _rule_spans(rule: Rule, data: bytes, marks: list[_Mark]) -> list[Span]:
    """The secrets ``rule`` finds in ``data``, except in matches touching a placeholder."""
    found: list[tuple[Span, int]] = []  # each secret with the end of its match
    next_mark = 0
    for match in rule.regex.finditer(data):
        start, end = match.span()
        while next_mark < len(marks) and marks[next_mark][1] <= start:
            next_mark += 1
        if next_mark < len(marks) and marks[next_mark][0] < end:
            # A placeholder is never redacted again, nor swallowed by a bigger secret. (Checking
            # the whole match is enough: a key found inside a placeholder, as in its slug, is
            # followed by the rest of it, so the secret would touch it too.)
            continue
        span = rule.secret(data, start, end)
        if span is not None and span[0] < span[1]:
            found.append((span, end))
    if not rule.not_followed_by:
        return [span for span, _ in found]
    # Right to left, so that a match followed by the next accepted one counts as followed by its
    # placeholder, as it will be; otherwise crd_…-crd_… would need a second pass.
    kept: list[Span] = []
    next_start = -1
    for span, end in reversed(found):
        if end == len(data) or end == next_start or data[end] not in rule.not_followed_by:
            kept.append(span)
            next_start = span[0]
    kept.reverse()
    return kept


def _substitute(
    data: bytes, marks: list[_Mark], spans: list[Span], slug: str, digest_key: bytes
) -> tuple[bytes, list[_Mark]]:
    """Replace the (sorted, disjoint, mark-free) ``spans`` by placeholders; shift the marks."""
    pieces: list[bytes] = []
    moved: list[_Mark] = []
    position = shift = i = 0
    for start, end in spans:
        while i < len(marks) and marks[i][0] < start:
            moved.append((marks[i][0] + shift, marks[i][1] + shift, marks[i][2]))
            i += 1
        replacement = _placeholder(slug, data[start:end], digest_key)
        pieces += (data[position:start], replacement)
        moved.append((start + shift, start + shift + len(replacement), slug))
        shift += len(replacement) - (end - start)
        position = end
    moved.extend((s + shift, e + shift, rule) for s, e, rule in marks[i:])
    pieces.append(data[position:])
    return b"".join(pieces), moved


def redact(text: str, *, digest_key: bytes) -> Redaction:
    """Replace every secret in ``text`` with ``[REDACTED:<rule>:<8 hex>]``.

    The hex are the start of HMAC-SHA256(``digest_key``, secret); the key is the installation's
    own (``store.secret(REDACTION_SECRET)``).

    Idempotent (placeholders are left alone, and none matches a rule) and linear in the length of
    the text: RE2 matches in linear time, and each rule makes one pass.
    """
    data = text.encode("utf-8", "surrogatepass")
    marks: list[_Mark] = [(*match.span(), _RESERVED) for match in _PLACEHOLDER.finditer(data)]
    # Which literals the text holds. The original text is enough: a match that takes its literal
    # from a placeholder added on the way touches that placeholder, so it is dropped anyway. If
    # the set fails (it cannot run out of memory on a few literals, but if), every rule runs.
    present = _LITERALS.Match(data)
    present = frozenset(present) if present is not None else None
    changed = False
    for rule, literal_ids in zip(RULES, _RULE_LITERALS, strict=True):
        if present is not None and literal_ids and present.isdisjoint(literal_ids):
            continue
        spans = _rule_spans(rule, data, marks)
        if spans:
            data, marks = _substitute(data, marks, spans, rule.slug, digest_key)
            changed = True
    if not changed:
        return Redaction(text=text, count=0, rules=())
    slugs = tuple(slug for _, _, slug in marks if slug != _RESERVED)
    return Redaction(text=data.decode("utf-8", "surrogatepass"), count=len(slugs), rules=slugs)


def _placeholder_text(slug: str, secret: str, digest_key: bytes) -> str:
    return _placeholder(slug, secret.encode("utf-8", "surrogatepass"), digest_key).decode()


def _redact_keyed(key: object, value: str, digest_key: bytes) -> tuple[str, int]:
    """Redact a string, using its dict key as context: ``{"password": "..."}``."""
    result = redact(value, digest_key=digest_key)
    if result.count or not isinstance(key, str):
        return result.text, result.count
    raw_key = key.encode("utf-8", "surrogatepass")
    if _AUTHORIZATION_KEY.search(raw_key):
        data = value.encode("utf-8", "surrogatepass")
        scheme = _AUTH_SCHEME_PREFIX.match(data)
        if scheme is not None and scheme.end() < len(data):
            credential = _text(data, scheme.end(), len(data))
            if not credential.startswith(_TEMPLATE_STARTS) and "[REDACTED:" not in credential:
                prefix = _text(data, 0, scheme.end())
                return prefix + _placeholder_text("authorization", credential, digest_key), 1
        elif looks_like_secret(value):
            return _placeholder_text("authorization", value, digest_key), 1
    elif _SECRET_KEY.search(raw_key) and looks_like_secret(value):
        return _placeholder_text("generic_secret", value, digest_key), 1
    return value, 0


@dataclass(slots=True)
class _Frame:
    """A container being rebuilt by redact_value."""

    items: Iterator[Any]
    built: dict[Any, Any] | list[Any]
    is_tuple: bool
    parent: _Frame | None
    key: object  # where the finished container goes in its parent dict

    def add(self, key: object, item: object) -> None:
        if isinstance(self.built, dict):
            self.built[key] = item
        else:
            self.built.append(item)


def _open(
    container: dict[Any, Any] | list[Any] | tuple[Any, ...], parent: _Frame | None, key: object
) -> _Frame:
    if isinstance(container, dict):
        return _Frame(iter(container.items()), {}, False, parent, key)
    return _Frame(iter(container), [], isinstance(container, tuple), parent, key)


_DONE = object()
_Value = TypeVar("_Value")


def redact_value(value: _Value, *, digest_key: bytes) -> tuple[_Value, int]:
    """Redact every string inside a JSON-like value (dict/list/str/other); return (value, count).

    Dict keys are redacted too, and a key gives its value context: ``{"password": "Xy7#kP9$mQ"}``
    is redacted although the bare string would not be. Other values come back unchanged; the
    input is never modified. Iterative, so deep nesting cannot exhaust the stack.
    """
    total = 0

    def scalar(item: object, key: object = None) -> object:
        nonlocal total
        if not isinstance(item, str):
            return item
        text, count = _redact_keyed(key, item, digest_key)
        total += count
        return text

    if not isinstance(value, dict | list | tuple):
        return cast("_Value", scalar(value)), total
    frame = _open(value, None, None)
    while True:
        entry: Any = next(frame.items, _DONE)
        if entry is _DONE:
            finished = tuple(frame.built) if frame.is_tuple else frame.built
            if frame.parent is None:
                # Containers are rebuilt as the same type they came in as.
                return cast("_Value", finished), total
            frame.parent.add(frame.key, finished)
            frame = frame.parent
            continue
        if isinstance(frame.built, dict):
            key, child = entry
            new_key = scalar(key)
        else:
            key = new_key = None
            child = entry
        if isinstance(child, dict | list | tuple):
            frame = _open(child, frame, new_key)
        else:
            frame.add(new_key, scalar(child, key))
