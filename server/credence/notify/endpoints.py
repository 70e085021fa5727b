"""Push endpoint policy: public https hosts only, vetted after DNS and dialled at the vetted IP."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import httpcore
import httpx

from credence.tls import tls_context

# Resolves a host name to IP address strings; tests inject their own instead of real DNS.
Resolver = Callable[[str, int], Awaitable[list[str]]]
RESOLVE_TIMEOUT_SECONDS = 5.0
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Ranges that are not public although Python's ipaddress calls them global.
_NOT_PUBLIC = (
    ipaddress.ip_network("100.64.0.0/10"),  # carrier-grade NAT (RFC 6598)
    ipaddress.ip_network("192.0.0.0/24"),  # IETF protocol assignments
    ipaddress.ip_network("198.18.0.0/15"),  # benchmarking
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_DEFAULT_PORTS = {"https": 443, "http": 80}


class EndpointRefused(httpcore.ConnectError):
    """A push endpoint the policy will not connect to; the message says why (no internals)."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The operating system's resolver (getaddrinfo), every distinct address in its order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def is_public_address(address: IPAddress) -> bool:
    """True only for a globally routable unicast address (embedded IPv4 forms are unwrapped)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public_address(embedded)
        if address.teredo is not None:
            return False
    if isinstance(address, ipaddress.IPv4Address) and any(address in n for n in _NOT_PUBLIC):
        return False
    return address.is_global and not (
        address.is_multicast
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_unspecified
    )


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True)
class AllowedHosts:
    """CREDENCE_PUSH_ALLOWED_HOSTS: hosts (optionally with a port) admitted without the checks."""

    entries: frozenset[tuple[str, int | None]] = frozenset()

    @classmethod
    def parse(cls, values: Iterable[str]) -> AllowedHosts:
        """Parse ``host`` / ``host:port`` / ``[v6]:port`` entries; ValueError names a bad one."""
        entries = set()
        for raw in values:
            text = raw.strip().lower()
            try:
                parts = urlsplit(f"//{text}")
                port = parts.port
            except ValueError:
                parts, port = None, None
            if parts is None or not parts.hostname or parts.path or parts.query or "@" in text:
                raise ValueError(f"CREDENCE_PUSH_ALLOWED_HOSTS: {raw!r} is not a host or host:port")
            entries.add((parts.hostname, port))
        return cls(frozenset(entries))

    def admits(self, host: str, port: int) -> bool:
        """True when ``host`` (any port, or exactly ``port``) is listed."""
        host = host.lower().strip("[]")
        return (host, None) in self.entries or (host, port) in self.entries


@dataclass(frozen=True)
class EndpointPolicy:
    """Which push endpoints may be used, and the resolver that finds their addresses."""

    allowed: AllowedHosts = AllowedHosts()
    resolver: Resolver = system_resolver

    def target(self, url: str) -> tuple[str, int]:
        """The (host, port) of ``url`` if its scheme is acceptable; ValueError otherwise."""
        try:
            parts = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise ValueError(f"push endpoint is not a valid URL: {exc}") from None
        scheme = parts.scheme
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
        if scheme == "https" or (scheme == "http" and self.allowed.admits(parts.host, port)):
            return parts.host, port
        raise ValueError(
            "push endpoint must use https (http only to a host in CREDENCE_PUSH_ALLOWED_HOSTS)"
        )

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses to dial for ``host``: every one public, else EndpointRefused."""
        literal = _literal(host)
        if literal is not None:
            if not self.allowed.admits(host, port) and not is_public_address(literal):
                raise EndpointRefused("push endpoint is not a public address")
            return [str(literal)]
        try:
            with anyio.fail_after(RESOLVE_TIMEOUT_SECONDS):
                found = await self.resolver(host, port)
        except (OSError, TimeoutError, ValueError):  # ValueError: a name IDNA cannot encode
            found = []
        if not found:
            raise EndpointRefused("push endpoint host does not resolve")
        if not self.allowed.admits(host, port):
            resolved = [_literal(a) for a in found]
            if any(a is None or not is_public_address(a) for a in resolved):
                raise EndpointRefused("push endpoint resolves to a non-public address")
        return found

    async def vet(self, url: str) -> None:
        """Subscribe-time check of ``url``: ValueError (the reason) unless it may be used."""
        host, port = self.target(url)
        try:
            await self.addresses(host, port)
        except EndpointRefused as exc:
            raise ValueError(str(exc)) from None


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Dials only addresses the policy vetted, resolved once per connection.

    httpcore still sends the URL's own host as Host and as TLS SNI (and verifies the
    certificate against it), so a name that rebinds between check and connect cannot switch
    the connection to another address.
    """

    def __init__(self, policy: EndpointPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Resolve and vet ``host`` (else EndpointRefused), then dial the first that answers."""
        addresses = await self._policy.addresses(host, port)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self, *args: object, **kwargs: object
    ) -> httpcore.AsyncNetworkStream:
        """Push never goes over a unix socket."""
        raise EndpointRefused("push endpoints are TCP only")

    async def sleep(self, seconds: float) -> None:
        """Delegate to anyio."""
        await self._inner.sleep(seconds)


def push_client(
    policy: EndpointPolicy, *, timeout: float = 30.0, limits: httpx.Limits | None = None
) -> httpx.AsyncClient:
    """The HTTP client every push delivery goes through: vetted, pinned, no redirects or proxies."""
    limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
    transport = httpx.AsyncHTTPTransport(verify=tls_context())
    # httpx has no parameter for the network backend: swap in a pool that dials through ours.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=tls_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=PinnedBackend(policy),
    )
    return httpx.AsyncClient(
        transport=transport, timeout=httpx.Timeout(timeout), follow_redirects=False, trust_env=False
    )


def policy_from(settings: object, resolver: Resolver | None = None) -> EndpointPolicy:
    """The policy CREDENCE_PUSH_ALLOWED_HOSTS configures (ValueError names a bad entry)."""
    allowed = AllowedHosts.parse(getattr(settings, "push_allowed_hosts", ()))
    return EndpointPolicy(allowed=allowed, resolver=resolver or system_resolver)
