"""Tests for secret redaction: rules, near misses, placeholders, idempotence, adversarial input."""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
import string

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from credence.memory.ingest import redact as redaction
from credence.memory.ingest.redact import RULES, Redaction, looks_like_secret

# One installation's placeholder key (tests/security/test_redaction_digest.py covers two).
KEY = bytes(range(32))


def redact(text: str) -> Redaction:
    """Redact with this module's installation key."""
    return redaction.redact(text, digest_key=KEY)


def redact_value(value: object) -> tuple[object, int]:
    """Redact a JSON-like value with this module's installation key."""
    return redaction.redact_value(value, digest_key=KEY)


_RNG = random.Random(20261201)
_ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, length: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(length))


def _token(*parts: str) -> str:
    # Fake credentials are assembled from pieces so that no complete credential-shaped literal
    # sits in the source for secret scanners to flag.
    return "".join(parts)


def placeholder(rule: str, secret: str) -> str:
    """The placeholder the spec defines, computed independently of the module."""
    digest = hmac.new(KEY, secret.encode("utf-8"), hashlib.sha256).hexdigest()[:8]
    return f"[REDACTED:{rule}:{digest}]"


AWS_KEY_ID = _token("AKIA", "IOSFODNN7", "EXAMPLE")
AWS_SESSION_KEY_ID = _token("ASIA", _random(string.ascii_uppercase + string.digits, 16))
AWS_SECRET = _token("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")
GITHUB_CLASSIC = _token("ghp", "_", _random(_ALNUM, 36))
GITHUB_OAUTH = _token("gho", "_", _random(_ALNUM, 36))
GITHUB_SERVER = _token("ghs", "_", _random(_ALNUM, 36))
GITHUB_FINE_GRAINED = _token("github", "_pat_", _random(_ALNUM, 22), "_", _random(_ALNUM, 59))
GITLAB = _token("glpat", "-", _random(_ALNUM + "_-", 20))
OPENAI_LEGACY = _token("sk", "-", _random(_ALNUM, 48))
OPENAI_PROJECT = _token("sk", "-proj-", _random(_ALNUM + "_-", 120), "9")
ANTHROPIC = _token("sk", "-ant-api03-", _random(_ALNUM + "_-", 93), "AA")
STRIPE_LIVE = _token("sk", "_live_", _random(_ALNUM, 99))
STRIPE_RESTRICTED = _token("rk", "_live_", _random(_ALNUM, 24))
STRIPE_TEST = _token("sk", "_test_", _random(_ALNUM, 24))
SLACK_BOT = _token("xoxb", "-", "123456789012-1234567890123-", _random(_ALNUM, 24))
SLACK_USER = _token(
    "xoxp", "-", "123456789012-1234567890123-1234567890123-", _random("abcdef0123456789", 32)
)
SLACK_HOOK_PATH = _token(
    "T",
    _random(string.ascii_uppercase, 8),
    "/B",
    _random(string.ascii_uppercase, 10),
    "/",
    _random(_ALNUM, 24),
)
GOOGLE = _token("AIza", "Sy", _random(_ALNUM + "_-", 33))
JWT = _token(
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
)
PEM_BODY = "\n".join(base64.b64encode(_RNG.randbytes(48)).decode() for _ in range(6))
PRIVATE_KEY = _token(
    "-----BEGIN RSA PRIVATE", " KEY-----\n", PEM_BODY, "\n-----END RSA PRIVATE", " KEY-----"
)
OPENSSH_KEY = _token(
    "-----BEGIN OPENSSH PRIVATE", " KEY-----\n", PEM_BODY, "\n-----END OPENSSH PRIVATE", " KEY-----"
)
CREDENCE = _token("crd", "_", _random(_ALNUM + "_-", 43))
OPAQUE = _random(_ALNUM, 32)
GENERIC = "Xy7#kP9$mQ2!vL"
ALIGNED = " " * 14  # a config file's value column


# (rule, text containing the secret, the secret itself)
POSITIVES: list[tuple[str, str, str]] = [
    ("aws_access_key", f"boto3 picked up {AWS_KEY_ID} from the env", AWS_KEY_ID),
    ("aws_access_key", f"temporary creds: {AWS_SESSION_KEY_ID}.", AWS_SESSION_KEY_ID),
    ("aws_secret_key", f"aws_secret_access_key = {AWS_SECRET}\n", AWS_SECRET),
    ("aws_secret_key", f'{{"SecretAccessKey": "{AWS_SECRET}"}}', AWS_SECRET),
    ("aws_secret_key", f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
    ("github_token", f"git clone with {GITHUB_CLASSIC} failed", GITHUB_CLASSIC),
    ("github_token", f"oauth token {GITHUB_OAUTH}", GITHUB_OAUTH),
    ("github_token", f"(installation: {GITHUB_SERVER})", GITHUB_SERVER),
    ("github_token", f"GH_TOKEN={GITHUB_FINE_GRAINED}", GITHUB_FINE_GRAINED),
    ("gitlab_token", f"curl --header 'PRIVATE-TOKEN: {GITLAB}'", GITLAB),
    ("openai_key", f"OPENAI_API_KEY={OPENAI_LEGACY}", OPENAI_LEGACY),
    ("openai_key", f"client = OpenAI(api_key='{OPENAI_PROJECT}')", OPENAI_PROJECT),
    ("anthropic_key", f"x-api-key: {ANTHROPIC}", ANTHROPIC),
    ("stripe_key", f"stripe.api_key = '{STRIPE_LIVE}'", STRIPE_LIVE),
    ("stripe_key", f"restricted key {STRIPE_RESTRICTED} for reports", STRIPE_RESTRICTED),
    ("stripe_key", f"test mode uses {STRIPE_TEST}", STRIPE_TEST),
    ("slack_token", f"SLACK_BOT_TOKEN={SLACK_BOT}", SLACK_BOT),
    ("slack_token", f"user token {SLACK_USER} expired", SLACK_USER),
    (
        "slack_webhook",
        f"posted to https://hooks.slack.com/services/{SLACK_HOOK_PATH} ok",
        SLACK_HOOK_PATH,
    ),
    ("google_api_key", f"maps?key={GOOGLE}&q=berlin", GOOGLE),
    ("jwt", f"the session cookie was {JWT}; it expired", JWT),
    ("private_key", f"key file:\n{PRIVATE_KEY}\nend of file", PRIVATE_KEY),
    ("private_key", f"id_ed25519:\n{OPENSSH_KEY}\n", OPENSSH_KEY),
    (
        "url_credentials",
        "DATABASE_URL=postgres://app:S3cr3t!pass@db.internal:5432/app",
        "S3cr3t!pass",
    ),
    ("url_credentials", "cache at redis://:hunter2@10.0.0.7:6379/0", "hunter2"),
    ("url_credentials", "pushed to https://bob:p@ss@w0rd@git.example.com/repo.git", "p@ss@w0rd"),
    ("authorization", f"Authorization: Bearer {OPAQUE}", OPAQUE),
    ("authorization", "authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("authorization", f'{{"headers": {{"authorization": "Token {OPAQUE}"}}}}', OPAQUE),
    ("authorization", f'{{\\"Authorization\\": \\"Bearer {OPAQUE}\\"}}', OPAQUE),
    ("authorization", f'"authorization": "{OPAQUE}"', OPAQUE),
    ("authorization", f"Proxy-Authorization: Basic {OPAQUE}", OPAQUE),
    ("credence_key", f"CREDENCE_API_KEY={CREDENCE}", CREDENCE),
    ("credence_key", f"used key {CREDENCE}.", CREDENCE),
    ("generic_secret", f'password="{GENERIC}"', GENERIC),
    ("generic_secret", "DB_PASSWORD=changeme123", "changeme123"),
    ("generic_secret", f'{{"client_secret": "{OPAQUE}"}}', OPAQUE),
    ("generic_secret", f"api_key: {OPAQUE}", OPAQUE),
    ("generic_secret", f"token = '{OPAQUE}'", OPAQUE),
    ("generic_secret", f"DB_PASS={OPAQUE}", OPAQUE),
    ("generic_secret", f"--password={GENERIC}", GENERIC),
    ("generic_secret", f"secretKey: `{OPAQUE}`", OPAQUE),
    # Aligned in a column: more blanks around the separator than four (they once went out in clear).
    ("generic_secret", f"user:     admin\npassword:{ALIGNED}{OPAQUE}\n", OPAQUE),
    ("generic_secret", f"api_key{ALIGNED}={ALIGNED}{OPAQUE}", OPAQUE),
    ("aws_secret_key", f"aws_secret_access_key{ALIGNED}= {AWS_SECRET}", AWS_SECRET),
    ("authorization", f"Authorization:{ALIGNED}Bearer {OPAQUE}", OPAQUE),
    ("session_cookie", f"Cookie:{ALIGNED}sid={OPAQUE}", f"sid={OPAQUE}"),
]


@pytest.mark.parametrize(("rule", "text", "secret"), POSITIVES)
def test_each_rule_redacts_its_secret(rule: str, text: str, secret: str) -> None:
    result = redact(text)
    assert result.text == text.replace(secret, placeholder(rule, secret))
    assert result.count == 1
    assert result.rules == (rule,)
    assert secret not in result.text


NEGATIVES = [
    "The password reset link was sent; token: expired. Secret: confidential.",
    "Please rotate your API key and enter your password when prompted.",
    "Fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (short 3f2a9c1).",
    "request 123e4567-e89b-12d3-a456-426614174000 took 1.2s",
    "Brand colours #ff00aa, #FFF and #1a2b3c4d on a 1920x1080 canvas.",
    "AKIAIOSFODNN7EXAMPL is one short; XAKIAIOSFODNN7EXAMPLEX is inside a word",
    "pip install scikit-learn; sk-learn is a nickname; sk-this-is-a-long-hyphenated-slug",
    "ghp_short and glpat-short and xoxb-1 are too short",
    "crd_" + "a" * 42 + " is one short, crd_" + "b" * 44 + " one long",
    "the header eyJhbGciOiJIUzI1NiJ9 alone is no token",
    "see https://example.com:8080/path?x=1, mail bob@example.com, git@github.com:org/repo.git",
    "http://user@host.example/ has no password",
    "Authorization: required. authorization: the user must log in first",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq\n-----END CERTIFICATE-----",
    "max_tokens=4096 tokenizer: bert-base-uncased bypass=Xy7kP9mQ2wLz",
    "api_key: YOUR_API_KEY password: ${DB_PASSWORD} secret: <your-secret-here>",
    "token = os.environ['TOKEN'] password = config.db.password secret=/etc/app/secret.key",
    "password: hunter2 (too short) password: ******** passphrase: correct-horse-battery",
    "Die Passwortrücksetzung hat geklappt — 密码 重置 成功 ✓",
    # Look-alikes of the vendor token families: prefixes alone, ids, hashes, UUIDs, URLs.
    "npm_config_cache=/tmp/npm npm_lifecycle_event=test; pip install pypi-simple",
    "hf_hub_download(repo_id='org/model'); SKU-20 in stock; the dapi endpoint; pattern",
    "md5 d41d8cd98f00b204e9800998ecf8427e and SKd41d8cd98f00b204e9800998ecf8427e0 differ",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "ids ep_01jq3z7k9m2n4p6r8s0t1v3w5x and 01ARZ3NDEKTSV4RRFFQ69G5FAV; v1.0-rc1; us-east-1",
    "AccountKey=<your-key> SharedAccessKey=${SAS_KEY} https://gitlab.com/glpat-docs/x",
    "",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_near_misses_are_left_alone(text: str) -> None:
    assert redact(text) == Redaction(text=text, count=0, rules=())


def test_placeholder_format_and_hash() -> None:
    result = redact(f"id {AWS_KEY_ID} end")
    digest = hmac.new(KEY, AWS_KEY_ID.encode(), hashlib.sha256).hexdigest()[:8]
    assert result.text == f"id [REDACTED:aws_access_key:{digest}] end"
    # The same secret always gets the same placeholder, so redacted episodes still correlate.
    assert redact(f"again: {AWS_KEY_ID}").text == f"again: [REDACTED:aws_access_key:{digest}]"


def test_rule_slugs_are_short_and_stable() -> None:
    slugs = [rule.slug for rule in RULES]
    assert len(slugs) == len(set(slugs))
    assert all(slug.isidentifier() and slug == slug.lower() and len(slug) <= 32 for slug in slugs)
    assert slugs.index("anthropic_key") < slugs.index("openai_key")
    assert slugs[-1] == "generic_secret"


def test_more_specific_rules_win() -> None:
    assert redact(ANTHROPIC).rules == ("anthropic_key",)
    assert redact(f"api_key: {ANTHROPIC}").rules == ("anthropic_key",)
    assert redact(f"Authorization: Bearer {JWT}").rules == ("jwt",)
    # The user name looks like a key, but a URL's user:password@ is url_credentials' business.
    assert redact(f"https://x-access-token:{GITHUB_CLASSIC}@github.com/o/r").text == (
        f"https://x-access-token:{placeholder('github_token', GITHUB_CLASSIC)}@github.com/o/r"
    )
    assert redact(f"https://oauth2:{GITLAB}@gitlab.com/o/r.git").rules == ("gitlab_token",)


def test_a_token_inside_a_value_is_redacted_once_under_its_own_rule() -> None:
    # The token rule runs first; the generic rule then sees a placeholder in the value and leaves
    # it be, rather than redacting a placeholder again.
    result = redact(f"password=pre-{AWS_KEY_ID}")
    assert result.text == "password=pre-" + placeholder("aws_access_key", AWS_KEY_ID)
    assert result.rules == ("aws_access_key",)


def test_google_keys_run_to_the_end_of_the_token() -> None:
    longer = GOOGLE + "Xy-_9"
    assert redact(f"key={longer}&q=1").text == f"key={placeholder('google_api_key', longer)}&q=1"


def test_a_later_rule_sees_the_placeholders_of_earlier_ones() -> None:
    # The Slack pattern would run on into the GitLab token (up to its "_"); the GitLab rule runs
    # first, so the Slack rule meets a placeholder and takes only its own part, as a second pass
    # would.
    slack_part = _token("xoxb", "-123456789012-")
    gitlab = _token("glpat", "-abcDEF123_ghiJKL456mno")
    result = redact(slack_part + gitlab)
    assert result.text == placeholder("slack_token", slack_part) + placeholder(
        "gitlab_token", gitlab
    )
    assert result.rules == ("slack_token", "gitlab_token")


def test_fixed_length_keys_glued_in_a_chain_are_all_found_in_one_pass() -> None:
    # Each crd_ key but the last is followed by another one, which becomes a placeholder: judged
    # right to left, every key is followed by a placeholder or the end, so one pass finds all.
    first = _token("crd", "_", "A" * 42, "-")
    second = _token("crd", "_", "B" * 42, "-")
    third = CREDENCE
    result = redact(first + second + third)
    assert result.text == "".join(
        placeholder("credence_key", key) for key in (first, second, third)
    )
    assert redact(result.text).count == 0
    # Followed by one more key character, it is no Credence key, and stays.
    assert redact(CREDENCE + "x").count == 0


def test_multiple_secrets_are_counted_in_order_of_appearance() -> None:
    text = (
        f"first {AWS_KEY_ID}, then {GITHUB_CLASSIC}; DB_PASSWORD={GENERIC} and "
        f"postgres://u:S3cr3t!pass@db/app, again {AWS_KEY_ID}"
    )
    result = redact(text)
    assert result.count == 5
    assert result.rules == (
        "aws_access_key",
        "github_token",
        "generic_secret",
        "url_credentials",
        "aws_access_key",
    )
    assert result.text == (
        f"first {placeholder('aws_access_key', AWS_KEY_ID)}, "
        f"then {placeholder('github_token', GITHUB_CLASSIC)}; "
        f"DB_PASSWORD={placeholder('generic_secret', GENERIC)} and "
        f"postgres://u:{placeholder('url_credentials', 'S3cr3t!pass')}@db/app, "
        f"again {placeholder('aws_access_key', AWS_KEY_ID)}"
    )


@pytest.mark.parametrize(
    "template",
    [
        "secret={}",
        "secret: {}",
        "secret := {}",
        "secret => '{}'",
        '"secret": "{}"',
        "'secret':'{}'",
        '\\"secret\\": \\"{}\\"',
        "secret\t=\t`{}`",
        "SECRET_VALUE = {}",
    ],
)
def test_generic_rule_finds_the_value_after_every_separator(template: str) -> None:
    text = template.format(OPAQUE)
    assert redact(text).text == template.format(placeholder("generic_secret", OPAQUE))


@settings(max_examples=300, deadline=None)
@given(
    key=st.sampled_from(["password", "DB_PASS", "client_secret", "apiKey", "x-api-key", "token"]),
    quote=st.sampled_from(["", '"', "'", "`", '\\"']),
    before=st.sampled_from(["", " ", "\t", "  ", " " * 9]),
    operator=st.sampled_from([":", "=", ":=", "=>"]),
    after=st.sampled_from(["", " ", "\t\t", " " * 12, "\t" * 5]),
    value=st.text(alphabet=_ALNUM + "!#$%&()*+./:=?@[]^_{|}~-", min_size=8, max_size=40).filter(
        lambda v: v[0] not in ":=>$%{<[" and looks_like_secret(v)
    ),
)
def test_property_generic_rule_redacts_exactly_the_value(
    key: str, quote: str, before: str, operator: str, after: str, value: str
) -> None:
    head = f"{key}{quote}{before}{operator}{after}{quote}"
    tail = f"{quote}, next"
    result = redact(head + value + tail)
    assert result.text == head + placeholder("generic_secret", value) + tail


def test_a_keyed_value_that_opens_like_a_glued_flag_is_the_keys_whole_value() -> None:
    # Found by the property test above: "-p…" after "password: " is not mysql's -pSECRET.
    value = "-pS3cretVal9"
    assert redact(f"password: {value}, next").text == (
        "password: " + placeholder("generic_secret", value) + ", next"
    )
    assert redact("mysql -u root -pS3cretVal9 db").rules == ("cli_password_glued",)


@pytest.mark.parametrize("blanks", [" ", " " * 7])
def test_a_glued_flag_after_a_key_naming_no_secret_is_still_the_flags_value(blanks: str) -> None:
    # Only generic_secret's keys give the value to it: "cmd: -pX…" had gone out in clear.
    text = f"cmd:{blanks}-pS3cretVal9 db"
    assert redact(text).text == (
        f"cmd:{blanks}-p" + placeholder("cli_password_glued", "S3cretVal9") + " db"
    )


def test_a_key_pair_aligned_in_a_table_is_found_whole() -> None:
    result = redact(f"| {AWS_KEY_ID}{ALIGNED}|{ALIGNED}{AWS_SECRET} |")
    assert AWS_KEY_ID not in result.text and AWS_SECRET not in result.text
    assert placeholder("aws_secret_key_pair", AWS_SECRET) in result.text


@pytest.mark.parametrize("blanks", [" " * 5, "\t" * 3, " \t " * 8])
def test_a_keyed_value_like_a_glued_flag_is_whole_after_any_run_of_blanks(blanks: str) -> None:
    # The "-p" had leaked: a lookback of four bytes missed the separator behind five blanks.
    value = "-pS3cretVal9"
    assert redact(f"password:{blanks}{value}, next").text == (
        f"password:{blanks}" + placeholder("generic_secret", value) + ", next"
    )


def test_generic_rule_keeps_the_value_when_it_starts_after_a_double_separator() -> None:
    # ':=' and '=>' are separators, not the start of the value.
    assert redact(f"token:={OPAQUE}").text == "token:=" + placeholder("generic_secret", OPAQUE)
    assert redact(f"token=>{OPAQUE}").text == "token=>" + placeholder("generic_secret", OPAQUE)


def test_looks_like_secret() -> None:
    assert looks_like_secret(GENERIC)
    assert looks_like_secret("changeme123")
    assert looks_like_secret(OPAQUE)
    for ordinary in [
        "reset",
        "confidential",
        "password",
        "YOUR_API_KEY",
        "correct-horse-battery-staple",
        "process.env.TOKEN",
        "get_secret()",
        "/etc/app/secret.key",
        "https://vault.example/v1/secret",
        "${DB_PASSWORD}",
        "aaaaaaaaaaaa1",
        "[REDACTED:generic_secret:0123abcd]",
    ]:
        assert not looks_like_secret(ordinary), ordinary


def test_non_ascii_text_and_lone_surrogates_survive() -> None:
    text = f"Schlüssel → {AWS_KEY_ID} ✓ \ud800 密码={GENERIC}"
    result = redact(text)
    assert result.text == (
        f"Schlüssel → {placeholder('aws_access_key', AWS_KEY_ID)} ✓ \ud800 "
        f"密码={GENERIC}"  # "密码" is not an English key name: the generic rule does not apply
    )
    assert redact("\udfff alone") == Redaction(text="\udfff alone", count=0, rules=())


def test_redaction_is_a_frozen_msgspec_struct() -> None:
    result = redact(f"k {AWS_KEY_ID}")
    with pytest.raises(AttributeError):
        result.count = 0  # type: ignore[misc]
    decoded = msgspec.json.decode(msgspec.json.encode(result), type=Redaction)
    assert decoded == result


# --- idempotence --------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "text", "secret"), POSITIVES)
def test_redacting_twice_changes_nothing(rule: str, text: str, secret: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice == Redaction(text=once.text, count=0, rules=())


@pytest.mark.parametrize("rule", [rule.slug for rule in RULES])
def test_a_placeholder_never_matches_a_rule(rule: str) -> None:
    mark = f"[REDACTED:{rule}:0123abcd]"
    for text in [
        mark,
        f"password={mark}",
        f'"api_key": "{mark}"',
        f"token: {mark}",
        f"Authorization: Bearer {mark}",
        f"authorization: {mark}",
        f"https://user:{mark}@host/",
        f"aws_secret_access_key={mark}",
        f"https://hooks.slack.com/services/{mark}",
    ]:
        assert redact(text) == Redaction(text=text, count=0, rules=()), text


# Secrets that identify themselves, without a key or header around them.
_SECRETS = [
    AWS_KEY_ID,
    AWS_SESSION_KEY_ID,
    GITHUB_CLASSIC,
    GITHUB_FINE_GRAINED,
    GITLAB,
    OPENAI_LEGACY,
    OPENAI_PROJECT,
    ANTHROPIC,
    STRIPE_LIVE,
    SLACK_BOT,
    GOOGLE,
    JWT,
    PRIVATE_KEY,
    CREDENCE,
]
_SECRET_TEXTS = [text for _, text, _ in POSITIVES]


def test_standalone_secrets_are_found_alone() -> None:
    for secret in _SECRETS:
        assert redact(secret).count == 1, secret


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.text(max_size=30), st.sampled_from(_SECRETS), st.sampled_from(_SECRET_TEXTS)),
        max_size=8,
    )
)
def test_property_idempotent_and_no_embedded_secret_survives(pieces: list[str]) -> None:
    text = " ".join(pieces)
    once = redact(text)
    assert redact(once.text) == Redaction(text=once.text, count=0, rules=())
    assert once.count == len(once.rules)
    for piece in pieces:
        if piece in _SECRETS:
            assert piece not in once.text


_SECRETISH = st.lists(
    st.sampled_from(
        [
            *"aAkKsSzZ09_-:=/@.#?'\"`\\ \n\t[]",
            *["AKIA", "sk-", "ghp_", "eyJ", "://", "crd_", "password", "token", "Authorization"],
            *["Bearer ", "-----BEGIN ", "PRIVATE KEY-----", "-----END ", "[REDACTED:", "jwt:"],
            *["0123abcd]", OPAQUE, AWS_KEY_ID, GITHUB_CLASSIC, "https://u:", "@h/"],
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_SECRETISH)
def test_property_idempotent_on_secret_shaped_noise(text: str) -> None:
    once = redact(text)
    assert redact(once.text) == Redaction(text=once.text, count=0, rules=())


# --- redact_value -------------------------------------------------------------------------


def test_redact_value_walks_nested_structures() -> None:
    value = {
        "summary": f"deploy used {AWS_KEY_ID}",
        "count": 3,
        "ratio": 0.5,
        "ok": True,
        "missing": None,
        "tool_calls": [
            {"name": "http", "args": {"url": "https://u:S3cr3t!pass@api/x", "retries": 2}},
            ("tuple", GITHUB_CLASSIC),
        ],
        f"key {AWS_KEY_ID}": "a secret in a key",
    }
    redacted, count = redact_value(value)
    assert count == 4
    assert redacted == {
        "summary": f"deploy used {placeholder('aws_access_key', AWS_KEY_ID)}",
        "count": 3,
        "ratio": 0.5,
        "ok": True,
        "missing": None,
        "tool_calls": [
            {
                "name": "http",
                "args": {
                    "url": f"https://u:{placeholder('url_credentials', 'S3cr3t!pass')}@api/x",
                    "retries": 2,
                },
            },
            ("tuple", placeholder("github_token", GITHUB_CLASSIC)),
        ],
        f"key {placeholder('aws_access_key', AWS_KEY_ID)}": "a secret in a key",
    }
    assert value["summary"] == f"deploy used {AWS_KEY_ID}"  # the input is untouched


def test_redact_value_uses_the_key_as_context() -> None:
    value = {
        "password": GENERIC,
        "DB_PASSWORD": "changeme123",
        "Authorization": f"Bearer {OPAQUE}",
        "authorization": OPAQUE,
        "password_hint": "reset",
        "token": "expired",
        "name": GENERIC,
    }
    redacted, count = redact_value(value)
    assert count == 4
    assert redacted == {
        "password": placeholder("generic_secret", GENERIC),
        "DB_PASSWORD": placeholder("generic_secret", "changeme123"),
        "Authorization": f"Bearer {placeholder('authorization', OPAQUE)}",
        "authorization": placeholder("authorization", OPAQUE),
        "password_hint": "reset",
        "token": "expired",
        "name": GENERIC,
    }
    assert redact_value(redacted) == (redacted, 0)


def test_redact_value_on_scalars() -> None:
    assert redact_value(f"x {AWS_KEY_ID}") == (f"x {placeholder('aws_access_key', AWS_KEY_ID)}", 1)
    assert redact_value(42) == (42, 0)
    assert redact_value(None) == (None, 0)
    assert redact_value([]) == ([], 0)
    assert redact_value({}) == ({}, 0)
    assert redact_value(()) == ((), 0)


def test_redact_value_survives_deep_nesting() -> None:
    depth = 20_000
    value: object = AWS_KEY_ID
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    redacted, count = redact_value(value)
    assert count == 1
    for level in reversed(range(depth)):
        redacted = redacted[0] if level % 2 else redacted["k"]  # type: ignore[index]
    assert redacted == placeholder("aws_access_key", AWS_KEY_ID)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.sampled_from(_SECRETS),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(max_size=10) | st.sampled_from(["password", "token"]), children, max_size=4
        )
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_property_redact_value_is_idempotent(value: object) -> None:
    once, _ = redact_value(value)
    assert redact_value(once) == (once, 0)


# --- adversarial input --------------------------------------------------------------------

MB = 1_000_000


def _fill(unit: str, size: int = MB) -> str:
    return (unit * (size // len(unit) + 1))[:size]


ADVERSARIAL = {
    "one letter": "a" * MB,
    "jwt prefixes": "eyJ" + _fill("a.", MB - 3),
    "begin markers": _fill("-----BEGIN "),
    "private key headers without end": _fill("-----BEGIN RSA PRIVATE KEY-----\n"),
    "scheme then colons": "https://" + ":" * (MB - 8),
    "url authorities without at": _fill("https://a:b"),
    "one megabyte password": "x://u:" + "p" * (MB - 7) + "@",
    "base64 run": base64.b64encode(random.Random(7).randbytes(MB * 3 // 4)).decode(),
    "keys without values": _fill("password="),
    "one megabyte value": "token=" + _fill("Xy7kP9mQ2wLz", MB - 6),
    "headers without values": _fill("Authorization: "),
    "whitespace after a key": "password" + " " * MB,
    "token prefixes": _fill("sk-ghp_AKIAcrd_xoxb-glpat-AIza"),
    "unicode": _fill("é password=ü€ sk-ant-\ud800"),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_completes(name: str) -> None:
    text = ADVERSARIAL[name]
    result = redact(text)
    assert result.count == len(result.rules)
    assert redact(result.text).count == 0


def test_adversarial_long_secrets_are_redacted_whole() -> None:
    long_password = ADVERSARIAL["one megabyte password"]
    assert (
        redact(long_password).text
        == "x://u:" + placeholder("url_credentials", "p" * (MB - 7)) + "@"
    )
    long_value = ADVERSARIAL["one megabyte value"]
    assert redact(long_value).text == "token=" + placeholder("generic_secret", long_value[6:])


def test_adversarial_dense_secrets() -> None:
    text = _fill(AWS_KEY_ID + " ")
    result = redact(text)
    assert result.count == MB // (len(AWS_KEY_ID) + 1)
    assert AWS_KEY_ID not in result.text
