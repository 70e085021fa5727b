"""A small, fast-to-import HTTP client for a remote Credence server (stdlib only).

It speaks HTTP/1.1 over a socket itself, one request per connection (``Connection: close``):
``http.client`` pulls in the ``email`` package, which costs the prompt hook a good part of its
start-up on a busy machine.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"
API = "/api/v1"


class RemoteError(Exception):
    """The server could not be reached or answered with an error; ``status`` 0 when unreachable."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ConfigError(Exception):
    """The connection settings are missing or unsafe (said in one line)."""


class Remote:
    """A server URL and an API key; every call is one request on a fresh connection."""

    # A plain class, not a dataclass: the prompt hook imports this module and starts fast.
    def __init__(self, url: str, key: str, timeout: float = 30.0) -> None:
        self.url = url
        self.key = key
        self.timeout = timeout

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> tuple[int, bytes]:
        """Send one request; (status, body) for any HTTP answer, RemoteError when unreachable."""
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"CREDENCE_URL {self.url!r} is not an http(s) URL")
        target = parts.path.rstrip("/") + API + path + (f"?{urlencode(query)}" if query else "")
        payload = b"" if body is None else json.dumps(body).encode()
        head = [
            f"{method} {target} HTTP/1.1",
            f"Host: {parts.netloc.rsplit('@', 1)[-1]}",
            f"Authorization: Bearer {self.key}",
            "Accept: */*",
            "Connection: close",
            "User-Agent: credence-integrations",
        ]
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        request = ("\r\n".join(head) + "\r\n\r\n").encode("utf-8") + payload
        try:
            return _exchange(parts.scheme, parts.hostname, parts.port, request, timeout)
        except (OSError, ValueError) as exc:
            raise RemoteError(0, f"cannot reach {self.url}: {exc or type(exc).__name__}") from None

    def call(self, method: str, path: str, **kwargs: Any) -> bytes:
        """The body of a 2xx answer; RemoteError naming the server's detail otherwise."""
        status, data = self.request(method, path, **kwargs)
        if 200 <= status < 300:
            return data
        raise RemoteError(status, f"HTTP {status} from {self.url}: {_detail(data)}")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        """The decoded JSON body of a 2xx answer."""
        return json.loads(self.call(method, path, **kwargs))


def _exchange(
    scheme: str, host: str, port: int | None, request: bytes, timeout: float | None
) -> tuple[int, bytes]:
    """Send one request and read the whole answer: (status, body)."""
    default_port = 443 if scheme == "https" else 80
    sock = socket.create_connection((host, port or default_port), timeout=timeout)
    chunks: list[bytes] = []
    try:
        if scheme == "https":
            import ssl

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        sock.sendall(request)
        while data := sock.recv(65536):
            chunks.append(data)
    finally:
        sock.close()
    return parse_response(b"".join(chunks))


def parse_response(data: bytes) -> tuple[int, bytes]:
    """The status and body of a whole HTTP/1.1 response (Content-Length, chunked or to EOF)."""
    head, separator, body = data.partition(b"\r\n\r\n")
    if not separator:
        raise ValueError("the connection closed before a whole response arrived")
    lines = head.decode("latin-1").split("\r\n")
    status_line = lines[0].split(" ", 2)
    if len(status_line) < 2 or not status_line[0].startswith("HTTP/"):
        raise ValueError(f"not an HTTP response: {lines[0][:80]!r}")
    status = int(status_line[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, _dechunk(body)
    if "content-length" in headers:
        length = int(headers["content-length"])
        if len(body) < length:
            raise ValueError("the connection closed before the whole body arrived")
        return status, body[:length]
    return status, body


def _dechunk(body: bytes) -> bytes:
    out: list[bytes] = []
    while True:
        size_line, separator, body = body.partition(b"\r\n")
        if not separator:
            raise ValueError("a chunked body ended early")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            return b"".join(out)
        if len(body) < size + 2:
            raise ValueError("a chunked body ended early")
        out.append(body[:size])
        body = body[size + 2 :]


def _detail(data: bytes) -> str:
    try:
        problem = json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace")[:200] or "no detail"
    detail = problem.get("detail") if isinstance(problem, dict) else None
    extra = problem.get("extra") if isinstance(problem, dict) else None
    if isinstance(extra, list) and extra and isinstance(extra[0], dict):
        detail = f"{detail} ({extra[0].get('message')})"
    return str(detail or problem)[:300]


def agent_path(agent_id: str, tail: str) -> str:
    """The API path of one agent's resource."""
    return f"/agents/{quote(agent_id, safe='')}{tail}"


KEY_FILE = "~/.config/credence/api-key"


def read_key_file(path: Path) -> str:
    """The key in ``path``, which must be readable by its owner alone (mode 600 or stricter)."""
    import stat

    info = path.stat()
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{path} is readable by others (mode {stat.filemode(info.st_mode)}): chmod 600 it"
        )
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise ConfigError(f"{path} belongs to another user")
    return path.read_text(encoding="utf-8").strip()


def connection_from(
    url: str | None, key: str | None, environ: Mapping[str, str] = os.environ
) -> Remote:
    """The server and key from flags, else CREDENCE_URL / CREDENCE_API_KEY, else the key file.

    The key file is CREDENCE_API_KEY_FILE (default ~/.config/credence/api-key).
    """
    chosen = key or environ.get("CREDENCE_API_KEY", "")
    if not chosen:
        from pathlib import Path

        path = Path(environ.get("CREDENCE_API_KEY_FILE") or KEY_FILE).expanduser()
        if path.is_file():
            chosen = read_key_file(path)
    if not chosen:
        raise ConfigError(
            "no API key: give --key, set CREDENCE_API_KEY, or put it in ~/.config/credence/api-key"
            " (mode 600)"
        )
    return Remote(url or environ.get("CREDENCE_URL") or DEFAULT_URL, chosen)


def only_agent(remote: Remote) -> str:
    """The key's agent when it has exactly one (agent keys usually do)."""
    me = remote.json("GET", "/me")
    agents = me.get("agents") if isinstance(me, dict) else None
    if isinstance(agents, list) and len(agents) == 1 and isinstance(agents[0], str):
        return agents[0]
    raise ConfigError("the key covers several agents: set CREDENCE_AGENT_ID (or give --agent)")
