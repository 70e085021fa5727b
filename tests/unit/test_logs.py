"""Log lines: JSON when asked, no outage tracebacks, no per-call transport noise."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from credence.app import create_app
from credence.db.engine import StoreUnavailable
from credence.logs import NOISY_LOGGERS, JsonFormatter, OutageFilter, formatter_class
from credence.settings import SettingsError, load_settings


def _record(message: str, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = None
    if exc is not None:
        try:
            raise exc
        except BaseException:
            exc_info = sys.exc_info()
    return logging.LogRecord("credence.test", logging.ERROR, __file__, 1, message, (), exc_info)


def test_json_lines_carry_level_logger_message_and_traceback() -> None:
    line = JsonFormatter().format(_record("bad\nthing", ValueError("boom")))
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["level"] == "ERROR" and entry["logger"] == "credence.test"
    assert entry["message"] == "bad\nthing"
    assert "ValueError: boom" in entry["exception"]


def test_the_log_format_setting_picks_the_formatter() -> None:
    assert formatter_class(load_settings({"CREDENCE_LOG_FORMAT": "json"}).log_format) is (
        JsonFormatter
    )
    assert formatter_class(load_settings({}).log_format) is not JsonFormatter
    with pytest.raises(SettingsError, match="CREDENCE_LOG_FORMAT must be text or json"):
        load_settings({"CREDENCE_LOG_FORMAT": "xml"})


def test_work_that_failed_because_the_database_is_away_writes_no_traceback() -> None:
    outage = OutageFilter()
    assert not outage.filter(_record("claiming failed", StoreUnavailable("database unavailable")))
    wrapped = RuntimeError("job failed")
    wrapped.__cause__ = StoreUnavailable("database unavailable")
    assert not outage.filter(_record("loop failed", wrapped))
    assert outage.filter(_record("a real bug", KeyError("x")))
    assert outage.filter(_record("no exception"))


def test_the_app_quiets_the_per_call_transport_loggers(tmp_path: Path) -> None:
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET)
    create_app(load_settings({}, data_dir=tmp_path), components=[])
    assert not logging.getLogger("mcp.server.streamable_http").isEnabledFor(logging.INFO)
    assert not logging.getLogger("psycopg.pool").isEnabledFor(logging.WARNING)
    assert logging.getLogger("credence").isEnabledFor(logging.INFO)
