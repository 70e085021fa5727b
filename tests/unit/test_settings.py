"""Settings come from CREDENCE_* variables, overridden by explicit flags, and refuse bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from credence.settings import SettingsError, load_settings


def test_environment_is_read_and_flags_win() -> None:
    env = {
        "CREDENCE_DATA_DIR": "/srv/credence",
        "CREDENCE_PORT": "9001",
        "CREDENCE_APPRISE_URLS": "json://a.example/x, mailto://b@c.example",
        "CREDENCE_SCHEDULER": "off",
    }
    settings = load_settings(env, port=9002)
    assert settings.data_dir == Path("/srv/credence")
    assert settings.port == 9002
    assert settings.apprise_urls == ("json://a.example/x", "mailto://b@c.example")
    assert settings.scheduler is False
    assert settings.database_path == Path("/srv/credence/credence.sqlite3")


def test_base_url_prefers_the_public_url() -> None:
    assert load_settings({"CREDENCE_HOST": "0.0.0.0"}).base_url == "http://127.0.0.1:8000"
    public = load_settings({"CREDENCE_PUBLIC_URL": "https://credence.example.org/"})
    assert public.base_url == "https://credence.example.org"


@pytest.mark.parametrize(
    "env",
    [{"CREDENCE_PORT": "http"}, {"CREDENCE_PORT": "70000"}, {"CREDENCE_LLM_TIMEOUT_S": "soon"}],
)
def test_bad_values_are_refused_with_the_setting_named(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        load_settings(env)
