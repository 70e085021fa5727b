"""Log formatting: control characters are escaped, so no logged value can forge a log line."""

from __future__ import annotations

import copy
import json
import logging
import re
from typing import Any

from credence.db.engine import StoreUnavailable

FORMAT = "%(levelname)s %(asctime)s %(name)s: %(message)s"
# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_control(text: str) -> str:
    """``text`` with every control character written as an escape (\\n, \\x00, \\u2028)."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in _NAMED:
            return _NAMED[char]
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(escape, text)


def _indented(block: str) -> str:
    # A traceback keeps its line breaks, but each of its lines is escaped and indented, so
    # nothing inside it (an exception message, say) can start a line of its own.
    return "\n".join("    " + escape_control(line) for line in block.splitlines())


class SafeFormatter(logging.Formatter):
    """A Formatter whose every record is one line; tracebacks follow as indented lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The formatted record with control characters escaped."""
        return escape_control(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        """The traceback, escaped line by line and indented."""
        return _indented(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        """The stack, escaped line by line and indented."""
        return _indented(super().formatStack(stack_info))


LOG_FORMATS = ("text", "json")
# Loggers that speak once per call at INFO (the MCP transport's "Terminating session: None"),
# or once per reconnection attempt (the pool, while the database is away).
NOISY_LOGGERS = {
    "mcp.server.streamable_http": logging.WARNING,
    "mcp.server.streamable_http_manager": logging.WARNING,
    "mcp.server.lowlevel.server": logging.WARNING,
    "psycopg.pool": logging.ERROR,
}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (and the traceback, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line; json.dumps escapes every control character."""
        entry: dict[str, Any] = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=True)


class OutageFilter(logging.Filter):
    """Drops the tracebacks of work that failed only because the database is away.

    The store logs one line when the database goes away and one when it is back; every
    background loop and request that meets the outage in between would repeat it.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a record whose exception (or its cause) is StoreUnavailable."""
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, StoreUnavailable):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


def formatter_class(log_format: str = "text") -> type[logging.Formatter]:
    """The formatter for CREDENCE_LOG_FORMAT: escaped text lines or JSON lines."""
    return JsonFormatter if log_format == "json" else SafeFormatter


def quiet_noisy_loggers() -> None:
    """Raise the level of the loggers that would write a line per call."""
    for name, level in NOISY_LOGGERS.items():
        logging.getLogger(name).setLevel(level)


def safe_handler(log_format: str = "text") -> logging.Handler:
    """A stderr handler that writes SafeFormatter (or JSON) lines, without outage tracebacks."""
    handler = logging.StreamHandler()
    handler.setFormatter(formatter_class(log_format)(FORMAT))
    handler.addFilter(OutageFilter())
    return handler


def uvicorn_log_config(log_format: str = "text") -> dict[str, Any]:
    """uvicorn's own logging setup, with its formatters made safe and colours off."""
    from uvicorn.config import LOGGING_CONFIG
    from uvicorn.logging import AccessFormatter, DefaultFormatter

    class SafeDefault(SafeFormatter, DefaultFormatter):
        """uvicorn's default lines, escaped."""

    class SafeAccess(SafeFormatter, AccessFormatter):
        """uvicorn's access lines, escaped."""

    config = copy.deepcopy(LOGGING_CONFIG)
    for name, kind in (("default", SafeDefault), ("access", SafeAccess)):
        config["formatters"][name] = {
            **config["formatters"][name],
            "()": kind,
            "use_colors": False,  # an escape sequence from a request must not reach a terminal
        }
        if log_format == "json":
            config["formatters"][name] = {"()": JsonFormatter}
    return config
