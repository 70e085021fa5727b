"""Redaction knows the common token families (gitleaks' and detect-secrets' as the reference)."""

from __future__ import annotations

import random
import string

import pytest

from credence.memory.ingest.redact import redact

_RNG = random.Random(20261213)
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
KEY = bytes(range(32))


def _r(alphabet: str, length: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(length))


def _t(*parts: str) -> str:
    # Assembled from pieces: no complete credential-shaped literal sits in the source.
    return "".join(parts)


# (rule, how the secret appears in real text, the secret)
FAMILIES: list[tuple[str, str, str]] = [
    (s[0], s[1].format(s[2]), s[2])
    for s in [
        ("npm_token", "//registry/:_authToken={}", _t("npm", "_", _r(_ALNUM, 36))),
        ("npm_token", "NPM_TOKEN {} published", _t("npm", "_", _r(_ALNUM, 36))),
        ("pypi_token", "twine upload -p {}", _t("pypi", "-AgEIcHlwaS5vcmc", _r(_ALNUM + "-_", 70))),
        ("pypi_token", "test index {}", _t("pypi", "-AgENdGVzdC5weXBpLm9yZw", _r(_ALNUM, 80))),
        ("gitlab_token", "deploy {}", _t("gl", "dt-", _r(_ALNUM + "_-", 20))),
        ("gitlab_token", "runner {}", _t("gl", "rt-", _r(_ALNUM + "_-", 24))),
        ("gitlab_token", "feed {}", _t("gl", "ft-", _r(_ALNUM + "_-", 20))),
        ("gitlab_token", "ci job {}", _t("gl", "cbt-", _r(_ALNUM + "_-", 30))),
        ("gitlab_token", "register {}", _t("GR13", "48941", _r(_ALNUM + "_-", 20))),
        ("slack_token", "bot {}", _t("xo", "xb-", "1234567890-", _r(_ALNUM, 24))),
        ("slack_token", "app {}", _t("xa", "pp-1-A0123456789-", "1234567890-", _r(_HEX, 64))),
        ("stripe_key", "stripe {}", _t("sk", "_live_", _r(_ALNUM, 40))),
        ("stripe_key", "STRIPE_WEBHOOK={}", _t("wh", "sec_", _r(_ALNUM, 32))),
        ("twilio_api_key", "twilio key {} ok", _t("S", "K", _r(_HEX, 32))),
        ("sendgrid_key", "mail via {}", _t("S", "G.", _r(_ALNUM, 22), ".", _r(_ALNUM + "_-", 43))),
        ("shopify_token", "X-Shopify-Access-Token: {}", _t("shp", "at_", _r(_HEX, 32))),
        ("shopify_token", "shared secret {}", _t("shp", "ss_", _r(_HEX, 32))),
        (
            "github_token",
            "fine-grained {}",
            _t("github", "_pat_", _r(_ALNUM, 22), "_", _r(_ALNUM, 59)),
        ),
        ("github_token", "refresh {}", _t("gh", "r_", _r(_ALNUM, 36))),
        ("google_api_key", "maps {}", _t("AI", "za", _r(_ALNUM + "_-", 35))),
        ("google_oauth_secret", "client {}", _t("GOC", "SPX-", _r(_ALNUM + "_-", 28))),
        (
            "azure_client_secret",
            "AZURE_CLIENT_SECRET {}",
            _t("a1B", "8Q~", _r(_ALNUM + "_~.-", 34)),
        ),
        (
            "azure_storage_key",
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey={};EndpointSuffix=core",
            _t(_r(_ALNUM + "+/", 86), "=="),
        ),
        (
            "azure_storage_key",
            "Endpoint=sb://x/;SharedAccessKey={}",
            _t(_r(_ALNUM + "+/", 43), "="),
        ),
        ("huggingface_token", "HF {}", _t("h", "f_", _r(string.ascii_letters, 34))),
        ("digitalocean_token", "doctl {}", _t("do", "p_v1_", _r(_HEX, 64))),
        ("mailchimp_key", "mc {}", _t(_r(_HEX, 32), "-us", "12")),
        (
            "telegram_bot_token",
            "https://api.telegram.org/bot{}/sendMessage",
            _t("123456789", ":AA", _r(_ALNUM + "_-", 33)),
        ),
        ("square_token", "square {}", _t("sq0", "atp-", _r(_ALNUM + "_-", 22))),
        ("square_token", "square secret {}", _t("sq0", "csp-", _r(_ALNUM + "_-", 43))),
        ("databricks_token", "DATABRICKS {}", _t("da", "pi", _r(_HEX, 32))),
        ("vault_token", "VAULT_TOKEN {}", _t("hv", "s.", _r(_ALNUM + "_-", 95))),
        (
            "age_secret_key",
            "# key\n{}",
            _t("AGE-SECRET", "-KEY-1", _r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        ),
        ("atlassian_token", "jira {}", _t("ATA", "TT3", _r(_ALNUM + "_-", 180))),
        ("linear_key", "linear {}", _t("lin", "_api_", _r(_ALNUM, 40))),
        ("postman_key", "postman {}", _t("PM", "AK-", _r(_HEX, 24), "-", _r(_HEX, 34))),
        ("pulumi_token", "PULUMI {}", _t("pu", "l-", _r(_HEX, 40))),
        ("grafana_token", "grafana cloud {}", _t("gl", "c_", _r(_ALNUM + "+/", 60), "=")),
        ("grafana_token", "service account {}", _t("gl", "sa_", _r(_ALNUM, 32), "_", _r(_HEX, 8))),
        (
            "newrelic_key",
            "NEW_RELIC {}",
            _t("NR", "AK-", _r(string.ascii_uppercase + string.digits, 27)),
        ),
        ("sentry_token", "SENTRY_AUTH {}", _t("sntr", "yu_", _r(_HEX, 64))),
        ("doppler_token", "DOPPLER {}", _t("dp", ".pt.", _r(_ALNUM, 43))),
        ("planetscale_token", "pscale {}", _t("pscale", "_tkn_", _r(_ALNUM, 43))),
        ("flyio_token", "FLY {}", _t("fo", "1_", _r(_ALNUM + "_-", 43))),
        ("notion_token", "NOTION {}", _t("nt", "n_", _r(string.digits, 11), _r(_ALNUM, 35))),
        ("heroku_key", "HEROKU {}", _t("HR", "KU-", _r(_ALNUM + "_-", 60))),
        (
            "dynatrace_token",
            "DT {}",
            _t(
                "dt0",
                "c01.",
                _r(string.ascii_uppercase + string.digits, 24),
                ".",
                _r(string.ascii_uppercase + string.digits, 64),
            ),
        ),
        ("alibaba_key", "aliyun {}", _t("LT", "AI", _r(_ALNUM, 20))),
        ("onepassword_token", "OP {}", _t("op", "s_eyJ", _r(_ALNUM + "+/", 250))),
        ("docker_hub_token", "docker login -p {}", _t("dckr", "_pat_", _r(_ALNUM + "_-", 27))),
        (
            "terraform_token",
            "TFC {}",
            _t(_r("abcdef0123456789", 14), ".atlas", "v1.", _r(_ALNUM, 64)),
        ),
        ("supabase_token", "SUPABASE {}", _t("sb", "p_", _r(_HEX, 40))),
        ("airtable_token", "airtable {}", _t("pa", "t", _r(_ALNUM, 14), ".", _r(_HEX, 64))),
        ("artifactory_key", "jfrog {}", _t("AK", "Cp", _r(_ALNUM, 69))),
        ("cloudflare_ca_key", "origin ca {}", _t("v1", ".0-", _r(_HEX, 24), "-", _r(_HEX, 146))),
        (
            "jwt",
            "cookie={}",
            _t("eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiIxIn0", ".", _r(_ALNUM + "_-", 43)),
        ),
        (
            "private_key",
            "{}",
            _t(
                "-----BEGIN EC PRIVATE",
                " KEY-----\n",
                _r(_ALNUM, 64),
                "\n-----END EC PRIVATE",
                " KEY-----",
            ),
        ),
        (
            "private_key",
            "{}",
            _t(
                "-----BEGIN PGP PRIVATE",
                " KEY BLOCK-----\n\n",
                _r(_ALNUM, 64),
                "\n-----END PGP PRIVATE",
                " KEY BLOCK-----",
            ),
        ),
    ]
]


@pytest.mark.parametrize(("rule", "text", "secret"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_family_is_redacted_under_its_own_rule(rule: str, text: str, secret: str) -> None:
    result = redact(text, digest_key=KEY)
    assert secret not in result.text, result.text
    assert rule in result.rules, result.rules
    assert redact(result.text, digest_key=KEY).text == result.text  # a second pass: nothing


def test_every_new_family_is_covered() -> None:
    assert {
        "npm_token",
        "pypi_token",
        "gitlab_token",
        "slack_token",
        "stripe_key",
        "twilio_api_key",
        "sendgrid_key",
        "shopify_token",
        "github_token",
        "google_api_key",
        "azure_client_secret",
        "azure_storage_key",
        "jwt",
        "private_key",
    } <= {rule for rule, _, _ in FAMILIES}


LOOK_ALIKES = [
    "npm_config_registry=https://registry.example.org/ npm_lifecycle_event=test npm_" + "a" * 35,
    "pip install pypi-simple; the pypi-attestations docs; pypi-AgE is only a prefix",
    "hf_hub_download(repo_id='org/model') with HF_HOME=/cache and hf_" + "Ab" * 10,
    "SKU-1234 in stock; SK"
    + "0" * 31
    + " is one short; sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "md5 d41d8cd98f00b204e9800998ecf8427e and SKd41d8cd98f00b204e9800998ecf8427e0",
    "uuid 550e8400-e29b-41d4-a716-446655440000, ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "ids bel_01jq3z7k9m2n4p6r8s0t1v3w5x ep_01jq3z7k9m2n4p6r8s0t1v3w5x",
    "https://docs.stripe.com/keys#test-live-modes https://gitlab.com/glpat-docs/readme",
    "the dapi endpoint, pattern matching, a key-value store, the secret_sauce recipe",
    "AccountKey is required; SharedAccessKey=<your-key>; SG.example.com resolves",
    "telegram chat 123456789:hello and -us-east-1 regions with 0123456789abcdef0123456789abcdef",
    "release v1.0-rc1 and v1.0-" + "a" * 24 + " build; lin_api_docs; PMAK-docs; pul-request",
    "dp.pt. prefix alone; hvs.short; AGE-SECRET-KEY-1 alone; LTAI is a prefix; ops_eyJ alone",
    "git rev 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 base64 aGVsbG8gd29ybGQ=",
    "path /srv/app/sbp_data and /srv/patterns/pat_file.txt",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_stay(text: str) -> None:
    result = redact(text, digest_key=KEY)
    assert (result.text, result.count) == (text, 0), result.rules
