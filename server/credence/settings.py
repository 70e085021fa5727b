"""Service settings: a frozen msgspec Struct read from CREDENCE_* environment variables."""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import msgspec


class SettingsError(ValueError):
    """A setting has a value the service cannot run with."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the service can be configured with; see README "Configuration"."""

    data_dir: Path = Path("./data")
    database_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    max_body_bytes: int = 4 * 1024 * 1024
    embed_url: str | None = None
    embed_model: str | None = None
    embed_api_key: str | None = None
    llm_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout_s: float = 60.0
    llm_token_cap: int = 200_000
    gate_judge: bool = False
    vapid_private_key: str | None = None
    vapid_subject: str = "mailto:credence@credence-demo.org"
    push_ttl_s: int = 7 * 24 * 3600
    apprise_urls: tuple[str, ...] = ()
    rate_limit_per_minute: int = 600
    pair_rate_limit_per_minute: int = 10
    read_rate_limit_per_minute: int = 3000
    read_concurrency_per_key: int = 4
    episode_quota_mb: int = 1024
    scheduler: bool = True
    log_level: str = "INFO"
    pwa_dir: Path | None = None
    push_allowed_hosts: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()
    request_timeout_s: float = 30.0
    log_format: str = "text"
    metrics: bool = False
    metrics_token: str | None = None

    @property
    def database_path(self) -> Path:
        """The SQLite file inside the data dir."""
        return self.data_dir / "credence.sqlite3"

    @property
    def base_url(self) -> str:
        """The URL people open; CREDENCE_PUBLIC_URL or derived from host and port."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"


_ENV_FIELDS: dict[str, str] = {
    "data_dir": "CREDENCE_DATA_DIR",
    "database_url": "CREDENCE_DATABASE_URL",
    "host": "CREDENCE_HOST",
    "port": "CREDENCE_PORT",
    "public_url": "CREDENCE_PUBLIC_URL",
    "max_body_bytes": "CREDENCE_MAX_BODY_BYTES",
    "embed_url": "CREDENCE_EMBED_URL",
    "embed_model": "CREDENCE_EMBED_MODEL",
    "embed_api_key": "CREDENCE_EMBED_API_KEY",
    "llm_url": "CREDENCE_LLM_URL",
    "llm_model": "CREDENCE_LLM_MODEL",
    "llm_api_key": "CREDENCE_LLM_API_KEY",
    "llm_timeout_s": "CREDENCE_LLM_TIMEOUT_S",
    "llm_token_cap": "CREDENCE_LLM_TOKEN_CAP",
    "gate_judge": "CREDENCE_GATE_JUDGE",
    "vapid_private_key": "CREDENCE_VAPID_PRIVATE_KEY",
    "vapid_subject": "CREDENCE_VAPID_SUBJECT",
    "push_ttl_s": "CREDENCE_PUSH_TTL_S",
    "apprise_urls": "CREDENCE_APPRISE_URLS",
    "rate_limit_per_minute": "CREDENCE_RATE_LIMIT_PER_MINUTE",
    "pair_rate_limit_per_minute": "CREDENCE_PAIR_RATE_LIMIT_PER_MINUTE",
    "read_rate_limit_per_minute": "CREDENCE_READ_RATE_LIMIT_PER_MINUTE",
    "read_concurrency_per_key": "CREDENCE_READ_CONCURRENCY_PER_KEY",
    "episode_quota_mb": "CREDENCE_EPISODE_QUOTA_MB",
    "scheduler": "CREDENCE_SCHEDULER",
    "log_level": "CREDENCE_LOG_LEVEL",
    "pwa_dir": "CREDENCE_PWA_DIR",
    "push_allowed_hosts": "CREDENCE_PUSH_ALLOWED_HOSTS",
    "trusted_proxies": "CREDENCE_TRUSTED_PROXIES",
    "request_timeout_s": "CREDENCE_REQUEST_TIMEOUT_S",
    "log_format": "CREDENCE_LOG_FORMAT",
    "metrics": "CREDENCE_METRICS",
    "metrics_token": "CREDENCE_METRICS_TOKEN",
}
_LIST_FIELDS = frozenset({"apprise_urls", "push_allowed_hosts", "trusted_proxies"})
_BOOL_FIELDS = frozenset({"scheduler", "metrics"})


def env_names() -> dict[str, str]:
    """Map each setting to its environment variable (used by the README table test)."""
    return dict(_ENV_FIELDS)


_BOOLEANS = {
    **dict.fromkeys(("1", "true", "yes", "on"), True),
    **dict.fromkeys(("0", "false", "no", "off"), False),
}
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
_TYPE_NAMES = {int: "a whole number", float: "a number", Path: "a path", str: "text"}
# (setting, least value, unit): sizes, counts and durations never go below these.
_MINIMUMS = (
    ("max_body_bytes", 1, "bytes"),
    ("llm_timeout_s", 0.001, "seconds"),
    ("llm_token_cap", 1, "tokens"),
    ("push_ttl_s", 0, "seconds"),
    ("rate_limit_per_minute", 0, "requests (0 switches the limit off)"),
    ("pair_rate_limit_per_minute", 0, "requests (0 switches the limit off)"),
    ("read_rate_limit_per_minute", 0, "requests (0 switches the limit off)"),
    ("read_concurrency_per_key", 0, "requests (0 switches the bound off)"),
    ("episode_quota_mb", 0, "megabytes (0 switches the quota off)"),
)
_URL_SETTINGS = ("public_url", "embed_url", "llm_url")


def load_settings(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Build Settings from the environment, then explicit overrides (e.g. CLI flags).

    Each value is checked on its own, so a SettingsError names the variable and what is wrong
    with it in one line; serving.check_startup() adds the checks that look at the machine.
    """
    env = os.environ if env is None else env
    types = {field.name: field.type for field in msgspec.structs.fields(Settings)}
    raw: dict[str, object] = {}
    for field, var in _ENV_FIELDS.items():
        value = env.get(var)
        if value is None or value == "":
            continue
        if field in _LIST_FIELDS:
            raw[field] = [u.strip() for u in value.replace("\n", ",").split(",") if u.strip()]
        elif field in _BOOL_FIELDS:
            if value.strip().lower() not in _BOOLEANS:
                raise SettingsError(
                    f"{var} must be true or false (or 1/0, yes/no, on/off), got {value!r}"
                )
            raw[field] = _BOOLEANS[value.strip().lower()]
        else:
            raw[field] = _convert(var, value, types[field])
    raw.update({k: v for k, v in overrides.items() if v is not None})
    try:
        settings = msgspec.convert(raw, Settings, strict=False, dec_hook=_decode_path)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"invalid setting: {exc}") from None
    _check_values(settings)
    return settings


def _convert(var: str, value: str, kind: object) -> object:
    try:
        return msgspec.convert(value, kind, strict=False, dec_hook=_decode_path)
    except msgspec.ValidationError:
        wanted = next(
            (name for t, name in _TYPE_NAMES.items() if kind == t or kind == t | None), "valid"
        )
        raise SettingsError(f"{var} must be {wanted}, got {value!r}") from None


def _check_values(settings: Settings) -> None:
    """The checks a value can fail on its own, without looking at the machine."""
    if not 0 < settings.port < 65536:
        raise SettingsError(f"CREDENCE_PORT must be 1-65535, got {settings.port}")
    if not settings.request_timeout_s > 0:
        raise SettingsError(
            "CREDENCE_REQUEST_TIMEOUT_S must be a positive number of seconds,"
            f" got {settings.request_timeout_s}"
        )
    for field, least, unit in _MINIMUMS:
        if getattr(settings, field) < least:
            value = getattr(settings, field)
            raise SettingsError(
                f"{_ENV_FIELDS[field]} must be at least {least:g} ({unit}), got {value}"
            )
    for field in _URL_SETTINGS:
        url = getattr(settings, field)
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise SettingsError(
                    f"{_ENV_FIELDS[field]} must be an http:// or https:// URL with a host,"
                    f" got {url!r}"
                )
    if settings.database_url is not None:
        parts = urlsplit(settings.database_url)
        if parts.scheme not in ("postgresql", "postgres") or not (parts.hostname or parts.query):
            raise SettingsError(
                "CREDENCE_DATABASE_URL must be a postgresql://user@host:port/database URL,"
                f" got {redact_url(settings.database_url)!r}"
            )
    if settings.log_format not in ("text", "json"):
        raise SettingsError(
            f"CREDENCE_LOG_FORMAT must be text or json, got {settings.log_format!r}"
        )
    if settings.log_level.lower() not in LOG_LEVELS:
        raise SettingsError(
            f"CREDENCE_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {settings.log_level!r}"
        )


def redact_url(url: str) -> str:
    """The URL with its password replaced by ``***``, for error lines and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)).geturl()


def check_listen(settings: Settings) -> None:
    """Before serving: CREDENCE_HOST is an address of this machine and CREDENCE_PORT is free."""
    host, port = settings.host, settings.port
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (OSError, UnicodeError):
        raise SettingsError(f"CREDENCE_HOST {host!r} is not an address or a known name") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise SettingsError(f"CREDENCE_PORT {port} is already in use on {host}") from None
            raise SettingsError(
                f"CREDENCE_HOST {host!r} cannot be listened on: {exc.strerror}"
            ) from None


def check_data_dir(path: Path) -> None:
    """The data dir exists (created if need be) and is writable; SettingsError otherwise."""
    var = _ENV_FIELDS["data_dir"]
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except FileExistsError:
        raise SettingsError(f"{var} must be a directory, got the file {str(path)!r}") from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SettingsError(f"{var} {str(path)!r} is not a writable directory: {reason}") from None


def _decode_path(kind: type, value: object) -> object:
    if kind is Path and isinstance(value, str | Path):
        return Path(value)
    raise NotImplementedError
