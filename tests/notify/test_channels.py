"""apprise channels: real delivery to a loopback webhook, per-channel failures that never raise."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from credence.notify.channels import ChannelResult, notify_channels

TITLE = "I've learned:"
BODY = "PDFs over 10MB reliably exhaust the ingester — review: https://credence.local/?belief=blf_1"


class _Webhook:
    """A loopback HTTP endpoint recording what apprise's json:// and form:// plugins POST."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        self.status = 200
        webhook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                webhook.requests.append(
                    (self.path, self.headers.get("Content-Type", ""), self.rfile.read(length))
                )
                self.send_response(webhook.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> _Webhook:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def webhook() -> Iterator[_Webhook]:
    with _Webhook() as running:
        yield running


def _refused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_json_channel_receives_title_and_body(webhook: _Webhook):
    [result] = await notify_channels([f"json://127.0.0.1:{webhook.port}/hook"], TITLE, BODY)
    assert result.ok and result.detail == "delivered"
    [(path, content_type, raw)] = webhook.requests
    assert path == "/hook" and content_type == "application/json"
    message = json.loads(raw)
    assert (message["title"], message["message"]) == (TITLE, BODY)


async def test_form_channel_receives_title_and_body(webhook: _Webhook):
    [result] = await notify_channels([f"form://127.0.0.1:{webhook.port}/form"], TITLE, BODY)
    assert result.ok
    [(path, _, raw)] = webhook.requests
    fields = parse_qs(raw.decode())
    assert path == "/form"
    assert (fields["title"], fields["message"]) == ([TITLE], [BODY])


async def test_a_refused_connection_is_a_failed_result_not_an_exception():
    [result] = await notify_channels([f"json://127.0.0.1:{_refused_port()}/x"], TITLE, BODY)
    assert not result.ok
    assert "connection" in result.detail.lower()


async def test_a_server_error_is_a_failed_result(webhook: _Webhook):
    webhook.status = 500
    [result] = await notify_channels([f"json://127.0.0.1:{webhook.port}/hook"], TITLE, BODY)
    assert not result.ok
    assert len(webhook.requests) == 1


async def test_failures_are_reported_per_channel_in_order(webhook: _Webhook):
    urls = [
        f"json://127.0.0.1:{_refused_port()}/down",
        "definitely-not-a-service://token@host",
        f"json://127.0.0.1:{webhook.port}/up",
        "not a url at all",
    ]
    results = await notify_channels(urls, TITLE, BODY)
    assert [r.ok for r in results] == [False, False, True, False]
    assert "unsupported" in results[1].detail
    assert [path for path, _, _ in webhook.requests] == ["/up"]


async def test_secrets_in_channel_urls_are_masked_in_results(webhook: _Webhook):
    url = f"json://hookuser:s3cr3t-password@127.0.0.1:{webhook.port}/hook"
    known, unknown = await notify_channels([url, "unknownscheme://s3cr3t-token@x"], TITLE, BODY)
    assert known.ok and not unknown.ok
    assert "s3cr3t" not in known.url and known.url.startswith("json://")
    assert "s3cr3t" not in unknown.url and unknown.url.startswith("unknownscheme://")


async def test_no_urls_means_no_results():
    assert await notify_channels([], TITLE, BODY) == []


def test_results_are_plain_values():
    assert ChannelResult("json://…", False, "x") == ChannelResult("json://…", False, "x")
