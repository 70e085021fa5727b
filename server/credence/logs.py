"""Log formatting: control characters are escaped, so no logged value can forge a log line."""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

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


def safe_handler() -> logging.Handler:
    """A stderr handler that writes SafeFormatter lines."""
    handler = logging.StreamHandler()
    handler.setFormatter(SafeFormatter(FORMAT))
    return handler


def uvicorn_log_config() -> dict[str, Any]:
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
    return config
