"""The redaction rules: vendor token formats and secrets read from their context."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import re2

from credence.memory.ingest.secret_shapes import (
    MIN_SECRET_LENGTH,
    TEMPLATE_STARTS,
    has_letter_and_digit,
    looks_like_secret,
)


def compile_pattern(pattern: bytes) -> Any:
    # Latin-1 mode over UTF-8 bytes: every class below is either pure ASCII or takes all high
    # bytes, so spans always fall on character boundaries, and lone surrogates (encoded with
    # surrogatepass) reach the matcher as plain bytes instead of failing.
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    return re2.compile(pattern, options)


# --- rules --------------------------------------------------------------------------------

Span = tuple[int, int]
# Narrows one match (data, start, end) to the span of its secret, or rejects it with None.
SecretSpan = Callable[[bytes, int, int], Span | None]


def _whole(data: bytes, start: int, end: int) -> Span | None:
    return start, end


def match_text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", "surrogatepass")


def _checked(check: Callable[[str], bool]) -> SecretSpan:
    """The whole match, if ``check`` accepts it."""

    def span(data: bytes, start: int, end: int) -> Span | None:
        return (start, end) if check(match_text(data, start, end)) else None

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
        if check is not None and not check(match_text(data, value_start, end)):
            return None
        return value_start, end

    return span


def _last_token(check: Callable[[str], bool] | None = None) -> SecretSpan:
    """The match's last blank- or '='-separated token (a flag's value), if ``check`` accepts it."""

    def span(data: bytes, start: int, end: int) -> Span | None:
        value_start = max(data.rfind(sep, start, end) for sep in (b" ", b"\t", b"=")) + 1
        for quote in (b'"', b"'"):
            if data.startswith(quote, value_start):
                value_start += 1
        if value_start >= end or (
            check is not None and not check(match_text(data, value_start, end))
        ):
            return None
        return value_start, end

    return span


def _after_first(marker: bytes, check: Callable[[str], bool] | None = None) -> SecretSpan:
    """What follows the first ``marker`` in the match (a cookie's value, a user's password)."""

    def span(data: bytes, start: int, end: int) -> Span | None:
        value_start = data.index(marker, start, end) + len(marker)
        while value_start < end and data[value_start] in b" \t":
            value_start += 1
        if check is not None and not check(match_text(data, value_start, end)):
            return None
        return value_start, end

    return span


def _short_flag_value(data: bytes, start: int, end: int) -> Span | None:
    # mysql -pS3cret: the value is glued to "-p"; "-pthread" and "-p1" are flags, not secrets.
    # As the value of a key naming a secret ("password:   -pX…") it is generic_secret's whole.
    if _follows_a_secret_key(data, start):
        return None
    value_start = data.index(b"-p", start, end) + 2
    value = match_text(data, value_start, end)
    return (value_start, end) if has_letter_and_digit(value) else None


_KEY_CHARS = frozenset((string.ascii_letters + string.digits + "_.-").encode())


def _follows_a_secret_key(data: bytes, at: int) -> bool:
    """Whether ``data[:at]`` ends with a key naming a secret, its separator and blanks, as
    generic_secret matches them ("password:   ", '"db_pass" => '). It scans back over one
    key at most, which only the match right after it can share, so a pass stays linear."""
    end = at
    while end > 0 and data[end - 1] in b" \t":
        end -= 1
    if end == 0 or data[end - 1] not in b":=>":
        return False
    while end > 0 and data[end - 1] in b":=> \t":
        end -= 1
    while end > 0 and data[end - 1] in b"\"'`\\":
        end -= 1
    key_start = end
    while key_start > 0 and data[key_start - 1] in _KEY_CHARS:
        key_start -= 1
    return key_start < end and SECRET_KEY.search(data[key_start:end]) is not None


def _trailing_40(data: bytes, start: int, end: int) -> Span | None:
    # An access key id, a separator, then 40 characters of base64: the secret access key.
    value = match_text(data, end - 40, end)
    return (end - 40, end) if has_letter_and_digit(value) else None


def _google_token(data: bytes, start: int, end: int) -> Span | None:
    # The refresh token's pattern may start with the character before "1//".
    refresh = data.find(b"1//0", start, end)
    return (
        (refresh, end) if refresh != -1 and not data.startswith(b"ya29.", start) else (start, end)
    )


def _after_user(data: bytes, start: int, end: int) -> Span | None:
    # -u user:password: after the first ':' that follows the flag's blank.
    blank = max(data.rfind(b" ", start, end), data.rfind(b"\t", start, end))
    colon = data.index(b":", blank, end)
    return colon + 1, end


def _secret_or_mixed(value: str) -> bool:
    return has_letter_and_digit(value) or looks_like_secret(value)


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
# Any run of blanks around it: config files align their values in columns ("token:      …").
_SEP = rb"[ \t]*(?::=|=>|[:=])[ \t]*"
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
AUTH_SCHEME_PREFIX = re.compile(_AUTH_SCHEME)  # stdlib: bounded input, a plain alternation


def _authorization_secret(data: bytes, start: int, end: int) -> Span | None:
    value_start = _after_separator(data, start, end)
    scheme = AUTH_SCHEME_PREFIX.match(data, value_start, end)
    if scheme is not None and scheme.end() < end:
        # An explicit scheme (Bearer, Basic, ...) says what follows is a credential.
        value = match_text(data, scheme.end(), end)
        if value.startswith(TEMPLATE_STARTS) or len(value) < 4:
            return None
        return scheme.end(), end
    return (value_start, end) if looks_like_secret(match_text(data, value_start, end)) else None


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
        compile_pattern(pattern),
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
        compile_pattern(
            rb"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            rb"(?:(?:[^-]|-[^-])*-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            rb"|(?:\s|\\[nr])*[A-Za-z0-9+/=]{16}(?:\n[ \t]+|[A-Za-z0-9+/=\\\r\n])*)"
        ),
        needs=(b"-----BEGIN ",),
    ),
    Rule(
        "jwt",
        compile_pattern(rb"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*"),
        needs=(b"eyJ",),
    ),
    Rule("anthropic_key", compile_pattern(rb"\bsk-ant-[A-Za-z0-9_\-]{20,}"), needs=(b"sk-ant-",)),
    Rule(
        "stripe_key",
        compile_pattern(rb"\b(?:[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{32,})"),
        needs=(b"k_live_", b"k_test_", b"whsec_"),
    ),
    Rule(
        "github_token",
        compile_pattern(rb"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        needs=(b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_", b"github_pat_"),
    ),
    Rule(
        "gitlab_token",
        compile_pattern(
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
        compile_pattern(
            rb"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{8,}"
        ),
        _slack_webhook_path,
        needs=(b"https://hooks.slack.com/",),
    ),
    Rule(
        "slack_token",
        compile_pattern(rb"\b(?:xox[abeoprs]|xapp)-[A-Za-z0-9\-]{10,}"),
        needs=(b"xox", b"xapp-"),
    ),
    Rule(
        "aws_secret_key_pair",
        # Unlabeled, right after its access key id ("AKIA… wJalr…/K7MDENG…"): caught before the
        # id becomes a placeholder, which would hide the pair from any later rule.
        compile_pattern(
            rb"\b(?:AKIA|ASIA)[A-Z0-9]{16}[ \t]*[,;:/|][ \t]*[A-Za-z0-9/+]{40}"
            rb"|\b(?:AKIA|ASIA)[A-Z0-9]{16}[ \t\r\n]{1,8}[A-Za-z0-9/+]{40}"
        ),
        _trailing_40,
        not_followed_by=_BASE64_CHARS,
        needs=(b"AKIA", b"ASIA"),
    ),
    Rule(
        "aws_access_key",
        compile_pattern(rb"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
        needs=(b"AKIA", b"ASIA"),
    ),
    Rule("google_api_key", compile_pattern(rb"\bAIza[0-9A-Za-z_\-]{35,}"), needs=(b"AIza",)),
    Rule(
        "google_oauth_token",
        # Access tokens (ya29.) and refresh tokens (1//0…), after gitleaks' gcp rules.
        compile_pattern(rb"\bya29\.[0-9A-Za-z_\-]{20,}|(?:^|[^0-9A-Za-z/])1//0[0-9A-Za-z_\-]{30,}"),
        _google_token,
        needs=(b"ya29.", b"1//0"),
    ),
    Rule(
        "discord_bot_token",
        compile_pattern(rb"\b[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}"),
        _checked(has_letter_and_digit),
        not_followed_by=_TOKEN_CHARS,
        needs=(b".",),
    ),
    *_VENDOR_TOKENS,
    Rule(
        "openai_key",
        compile_pattern(rb"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        _checked(has_letter_and_digit),  # not a hyphenated slug like sk-this-is-not-a-key,
        needs=(b"sk-",),
    ),
    Rule(
        "credence_key",
        compile_pattern(rb"\bcrd_[A-Za-z0-9_\-]{43}"),
        not_followed_by=_TOKEN_CHARS,
        needs=(b"crd_",),
    ),
    Rule(
        "aws_secret_key",
        compile_pattern(
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
        compile_pattern(rb"(?i:\b(?:account|sharedaccess)key)=[A-Za-z0-9+/]{40,100}={0,2}"),
        _value(),
        not_followed_by=_BASE64_CHARS,
        needs=(b"accountkey=", b"sharedaccesskey="),
        ignore_case=True,
    ),
    Rule(
        "url_credentials",
        # The password may hold a raw '@' (the last one ends it) but never '/', '?', '#' or
        # whitespace, which end the authority.
        compile_pattern(
            rb"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/?#@\[\]\"'<>]{0,128}:[^\s/?#\"'<>]+@"
        ),
        _url_password,
        needs=(b"://",),
    ),
    Rule(
        "authorization",
        compile_pattern(
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
        "azure_sas_signature",
        # A shared access signature's sig= (base64, URL-encoded) in a SAS URL or token.
        compile_pattern(rb"(?i:[?&]sig)=[A-Za-z0-9%+/]{30,}(?:%3[Dd]|=){0,2}"),
        _after_first(b"="),
        needs=(b"sig=",),
        ignore_case=True,
    ),
    Rule(
        "session_cookie",
        # Cookie: / Set-Cookie: headers carry sessions: the whole value, after the colon.
        compile_pattern(rb"(?i:\b(?:set-)?cookie)[ \t]*:[ \t]*[^\s=;]{1,64}=[^\r\n\"'`]{8,}"),
        _after_first(b":"),
        needs=(b"cookie",),
        ignore_case=True,
    ),
    Rule(
        "cli_password",
        # --password X, --pass X (mysql, psql wrappers, redis-cli, …); --password=X is a
        # key=value, which generic_secret takes.
        compile_pattern(rb"(?:^|[ \t])--?(?i:password|passwd|pass|pwd)[ \t]+[\"']?[^\s\"'`]{4,}"),
        _last_token(_secret_or_mixed),
        needs=(b"-pass", b"-pwd"),
        ignore_case=True,
    ),
    Rule(
        "cli_password_glued",
        compile_pattern(rb"(?:^|[ \t])-p[^\s\-=][^\s\"'`]{5,}"),
        _short_flag_value,
        needs=(b"-p",),
    ),
    Rule(
        "cli_user_password",
        # curl -u user:password, --user user:password.
        compile_pattern(rb"(?:^|[ \t])(?:-u|--user)[ \t]+[^\s:\"']{1,64}:[^\s\"'`]{4,}"),
        _after_user,
        needs=(b"-u", b"--user"),
    ),
    Rule(
        "prose_password",
        # "the admin password is hunter2", "password was: Tr0ub4dor&3".
        compile_pattern(
            rb"(?i:\bpass(?:word|phrase|wd)?)[ \t]+(?i:is|was)[ \t]*:?[ \t]+[\"'`]?"
            rb"[^\s\"'`,;]{6,}"
        ),
        _last_token(_secret_or_mixed),
        needs=(b"pass",),
        ignore_case=True,
    ),
    Rule(
        "generic_secret",
        compile_pattern(_SECRET_KEY_NAME + _Q + _SEP + _Q + _VALUE),
        _value(looks_like_secret),
        needs=(b"pass", b"secret", b"token", b"key", b"credential"),
        ignore_case=True,
    ),
)

SECRET_KEY = compile_pattern(rb"(?i)^[A-Za-z0-9_.\-]*" + _SECRET_KEY_NAME + rb"$")
AUTHORIZATION_KEY = compile_pattern(rb"(?i)^(?:proxy-)?authorization$")


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


LITERALS, RULE_LITERALS = _literal_set()
