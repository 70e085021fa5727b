"""Control characters in a request path are a 4xx, never a 500, and never forge a log line."""

from __future__ import annotations

import logging
import re
import sys

import pytest

from credence.logs import FORMAT, SafeFormatter, escape_control
from tests.security.rawhttp import exchange, served, status_of

PATHS = [
    b"/%00",
    b"/icons/%00.png",  # reached the file system: "embedded null byte", a 500
    b"/index.html%00",
    b"/api/v1/agents/%00",
    b"/api/v1/agents/a%0aFORGED",
    b"/api/v1/beliefs/%00x",
    b"/%0d%0aSet-Cookie:%20x=1",
    b"/js/%1b%5b31m.js",
    b"/api/v1/agents/x%7f",
    b"/a\x01b",  # a raw control byte: the HTTP parser refuses it
]


def _get(url: str, path: bytes) -> bytes:
    return exchange(url, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")


@pytest.mark.parametrize("path", PATHS, ids=[p.decode("latin-1") for p in PATHS])
def test_a_control_character_in_the_path_is_4xx(server, path: bytes) -> None:
    answer = _get(server.url, path)
    assert status_of(answer) in (400, 404), answer[:300]


def test_an_encoded_nul_before_a_real_asset_suffix_is_400(server) -> None:
    answer = _get(server.url, b"/icons/%00.png")
    assert status_of(answer) == 400
    assert b"control characters" in answer


def test_no_log_line_can_be_forged_through_a_path(tmp_path) -> None:
    forged = b"/icons/x%0aCRITICAL%20credence:%20FORGED%0d%00.png"
    with served(tmp_path / "data") as run:
        assert status_of(_get(run.url, forged)) == 400
    lines = run.stderr.splitlines()
    [refused] = [line for line in lines if "FORGED" in line]
    assert refused.startswith("WARNING ") and "credence.http" in refused
    assert "x\\nCRITICAL credence: FORGED\\r\\x00.png" in refused
    assert not any(line.startswith("CRITICAL") for line in lines)
    assert "\x00" not in run.stderr and "\r" not in run.stderr


def test_every_control_character_is_escaped() -> None:
    text = "".join(chr(c) for c in [*range(32), 127, 0x85, 0x9B, 0x2028, 0x2029])
    escaped = escape_control(f"a{text}b")
    assert escaped.startswith("a\\x00") and escaped.endswith("\\u2029b")
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029]", escaped)


def test_a_traceback_cannot_start_a_line_of_its_own() -> None:
    formatter = SafeFormatter(FORMAT)
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom %s", ("\n",), None)
    try:
        raise ValueError("bad\nERROR forged: line")
    except ValueError:
        record.exc_info = sys.exc_info()
    first, *rest = formatter.format(record).splitlines()
    assert first.startswith("ERROR ") and first.endswith("x: boom \\n")
    assert rest and all(line.startswith("    ") for line in rest)
