"""Service settings: a frozen msgspec Struct read from CREDENCE_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec


class SettingsError(ValueError):
    """A setting has a value the service cannot run with."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the service can be configured with; see README "Configuration"."""

    data_dir: Path = Path("./data")
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
    vapid_private_key: str | None = None
    vapid_subject: str = "mailto:credence@credence-demo.org"
    push_ttl_s: int = 7 * 24 * 3600
    apprise_urls: tuple[str, ...] = ()
    rate_limit_per_minute: int = 600
    pair_rate_limit_per_minute: int = 10
    scheduler: bool = True
    log_level: str = "INFO"
    pwa_dir: Path | None = None
    push_allowed_hosts: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()
    request_timeout_s: float = 30.0

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
    "vapid_private_key": "CREDENCE_VAPID_PRIVATE_KEY",
    "vapid_subject": "CREDENCE_VAPID_SUBJECT",
    "push_ttl_s": "CREDENCE_PUSH_TTL_S",
    "apprise_urls": "CREDENCE_APPRISE_URLS",
    "rate_limit_per_minute": "CREDENCE_RATE_LIMIT_PER_MINUTE",
    "pair_rate_limit_per_minute": "CREDENCE_PAIR_RATE_LIMIT_PER_MINUTE",
    "scheduler": "CREDENCE_SCHEDULER",
    "log_level": "CREDENCE_LOG_LEVEL",
    "pwa_dir": "CREDENCE_PWA_DIR",
    "push_allowed_hosts": "CREDENCE_PUSH_ALLOWED_HOSTS",
    "trusted_proxies": "CREDENCE_TRUSTED_PROXIES",
    "request_timeout_s": "CREDENCE_REQUEST_TIMEOUT_S",
}
_LIST_FIELDS = frozenset({"apprise_urls", "push_allowed_hosts", "trusted_proxies"})


def env_names() -> dict[str, str]:
    """Map each setting to its environment variable (used by the README table test)."""
    return dict(_ENV_FIELDS)


def load_settings(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Build Settings from the environment, then explicit overrides (e.g. CLI flags)."""
    env = os.environ if env is None else env
    raw: dict[str, object] = {}
    for field, var in _ENV_FIELDS.items():
        value = env.get(var)
        if value is None or value == "":
            continue
        if field in _LIST_FIELDS:
            raw[field] = [u.strip() for u in value.replace("\n", ",").split(",") if u.strip()]
        elif field == "scheduler":
            raw[field] = value.strip().lower() not in ("0", "false", "no", "off")
        else:
            raw[field] = value
    raw.update({k: v for k, v in overrides.items() if v is not None})
    try:
        settings = msgspec.convert(raw, Settings, strict=False, dec_hook=_decode_path)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"invalid setting: {exc}") from None
    if not 0 < settings.port < 65536:
        raise SettingsError(f"CREDENCE_PORT must be 1-65535, got {settings.port}")
    if not settings.request_timeout_s > 0:
        raise SettingsError(
            "CREDENCE_REQUEST_TIMEOUT_S must be a positive number of seconds,"
            f" got {settings.request_timeout_s}"
        )
    return settings


def _decode_path(kind: type, value: object) -> object:
    if kind is Path and isinstance(value, str | Path):
        return Path(value)
    raise NotImplementedError
