"""The small HTTP client's response parsing: Content-Length, chunked, cut short."""

from __future__ import annotations

import pytest

from credence.integrations.remote import parse_response


def test_content_length_and_chunked_bodies() -> None:
    plain = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-type: text/plain\r\n\r\nhello"
    assert parse_response(plain) == (200, b"hello")
    chunked = (
        b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4\r\n{"a"\r\n3;x=y\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n'
    )
    assert parse_response(chunked) == (404, b'{"a": 1}')
    assert parse_response(b"HTTP/1.0 204 No Content\r\n\r\n") == (204, b"")


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        b"HTTP/1.1 200 OK\r\ncontent-length: 1",
        b"SSH-2.0-OpenSSH\r\n\r\n",
    ],
)
def test_a_cut_or_foreign_answer_is_an_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        parse_response(data)
