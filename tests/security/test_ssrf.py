"""Push endpoints cannot make the server reach loopback or internal addresses (SSRF)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import httpx
import pytest
from harness.fakes.push import FakePushService

from credence.notify.endpoints import AllowedHosts, is_public_address
from credence.settings import Settings
from tests.livesrv import LiveServer, cli_key, running
from tests.security.rawhttp import RecordingListener

SUBS = "/api/v1/push/subscriptions"
PUBLIC = "93.184.215.14"

# One address of every class a push endpoint must never reach.
REFUSED = {
    "loopback v4": "127.0.0.1",
    "loopback v4 range": "127.8.9.10",
    "loopback v6": "::1",
    "private 10/8": "10.1.2.3",
    "private 172.16/12": "172.16.0.1",
    "private 192.168/16": "192.168.1.20",
    "link-local v4 (cloud metadata)": "169.254.169.254",
    "link-local v6": "fe80::1",
    "unique-local fd00::/8": "fd00::1",
    "unique-local fc00::/8": "fc00::1",
    "CGNAT 100.64/10": "100.64.0.1",
    "multicast v4": "224.0.0.1",
    "multicast v6": "ff02::1",
    "unspecified v4": "0.0.0.0",
    "unspecified v6": "::",
    "IPv4-mapped loopback": "::ffff:127.0.0.1",
    "IPv4-mapped private": "::ffff:10.0.0.1",
    "NAT64 loopback": "64:ff9b::7f00:1",
    "6to4 loopback": "2002:7f00:1::1",
}


class ScriptedResolver:
    """Stands in for DNS: a host answers its scripted lists in turn (the last one repeats)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        script = self.answers.get(host)
        if not script:
            raise OSError(f"{host} does not resolve")
        seen = self.calls.count(host)
        return script[min(seen, len(script)) - 1]


@pytest.fixture(scope="module")
def resolver() -> ScriptedResolver:
    names = {f"h{n}.internal-push.org": [[ip]] for n, ip in enumerate(REFUSED.values())}
    return ScriptedResolver(
        {
            **names,
            "localhost": [["127.0.0.1", "::1"]],
            "mixed.example-push.org": [[PUBLIC, "10.0.0.7"]],
            "push.example-push.org": [[PUBLIC]],
        }
    )


@pytest.fixture(scope="module")
def live(tmp_path_factory, resolver: ScriptedResolver) -> Iterator[LiveServer]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("ssrf") / "data", scheduler=False)
    with running(settings, resolver=resolver) as server:
        yield server


@pytest.fixture(scope="module")
def admin(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client(cli_key(live.settings, "admin")) as client:
        yield client


@pytest.fixture(scope="module")
def keys() -> Iterator[dict]:
    with FakePushService() as fake:
        yield fake.subscription("phone")["keys"]


@pytest.mark.parametrize("address", REFUSED.values(), ids=REFUSED.keys())
def test_no_refused_class_counts_as_public(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", [PUBLIC, "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_are_public(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", REFUSED.values(), ids=REFUSED.keys())
def test_subscribing_an_endpoint_at_a_refused_address_is_422(admin, keys, address) -> None:
    literal = f"[{address}]" if ":" in address else address
    endpoint = f"https://{literal}/push/x"
    response = admin.post(SUBS, json={"endpoint": endpoint, "keys": keys})
    assert response.status_code == 422, response.text
    assert "not a public address" in response.json()["detail"]
    assert endpoint not in [s["endpoint"] for s in admin.get(SUBS).json()["items"]]


@pytest.mark.parametrize("index", range(len(REFUSED)), ids=REFUSED.keys())
def test_a_name_resolving_to_a_refused_address_is_422(admin, keys, index) -> None:
    endpoint = f"https://h{index}.internal-push.org/push/x"
    response = admin.post(SUBS, json={"endpoint": endpoint, "keys": keys})
    assert response.status_code == 422, response.text
    assert "non-public address" in response.json()["detail"]


@pytest.mark.parametrize(
    ("endpoint", "reason"),
    [
        ("https://localhost/push/x", "non-public address"),
        ("https://mixed.example-push.org/push/x", "non-public address"),  # one bad answer is enough
        ("https://nowhere.example-push.org/push/x", "does not resolve"),
        ("http://push.example-push.org/push/x", "must use https"),
        ("http://127.0.0.1:9/push/x", "must use https"),
    ],
)
def test_other_unusable_endpoints_are_422(admin, keys, endpoint, reason) -> None:
    response = admin.post(SUBS, json={"endpoint": endpoint, "keys": keys})
    assert response.status_code == 422, response.text
    assert reason in response.json()["detail"]


def test_a_public_endpoint_is_accepted(admin, keys) -> None:
    response = admin.post(SUBS, json={"endpoint": "https://push.example-push.org/x", "keys": keys})
    assert response.status_code == 201, response.text


def test_a_rebinding_name_is_checked_again_and_never_dialled(tmp_path, keys) -> None:
    # Public while the subscription is checked, loopback by the time the push is sent.
    with RecordingListener() as internal:
        resolver = ScriptedResolver({"rebind.example-push.org": [[PUBLIC], ["127.0.0.1"]]})
        settings = Settings(data_dir=tmp_path / "data", scheduler=False)
        with running(settings, resolver=resolver) as live:
            admin = live.client(cli_key(settings, "admin"))
            endpoint = f"https://rebind.example-push.org:{internal.port}/push/phone"
            assert admin.post(SUBS, json={"endpoint": endpoint, "keys": keys}).status_code == 201
            [device] = admin.post("/api/v1/push/test").json()["devices"]
            admin.close()
        assert resolver.calls == ["rebind.example-push.org"] * 2
        assert internal.connections == 0
    assert device["outcome"] == "failed"
    assert device["detail"] == "refused: push endpoint resolves to a non-public address"


def test_the_connection_goes_to_the_vetted_address_with_the_name_as_host(tmp_path, keys) -> None:
    # An allowed on-premises relay, known only to the injected resolver: dialling anything but
    # the resolver's answer (the system's DNS, say) could not reach the listener.
    with RecordingListener() as relay:
        port = relay.port
        resolver = ScriptedResolver({"relay.onprem-push.test": [["127.0.0.1"]]})
        settings = Settings(
            data_dir=tmp_path / "data",
            scheduler=False,
            push_allowed_hosts=(f"relay.onprem-push.test:{relay.port}",),
        )
        with running(settings, resolver=resolver) as live:
            admin = live.client(cli_key(settings, "admin"))
            endpoint = f"http://relay.onprem-push.test:{relay.port}/push/phone"
            assert admin.post(SUBS, json={"endpoint": endpoint, "keys": keys}).status_code == 201
            [device] = admin.post("/api/v1/push/test").json()["devices"]
            admin.close()
        assert device["outcome"] == "sent", device
        [head] = relay.heads
    assert head.startswith(b"POST /push/phone HTTP/1.1\r\n")
    assert f"host: relay.onprem-push.test:{port}".encode() in head.lower()


def test_a_push_services_body_is_never_echoed(tmp_path, keys) -> None:
    secret = b"internal-admin-panel: db_password=hunter2"
    with RecordingListener(status=400, body=secret) as service:
        settings = Settings(
            data_dir=tmp_path / "data", scheduler=False, push_allowed_hosts=("127.0.0.1",)
        )
        with running(settings) as live:
            admin = live.client(cli_key(settings, "admin"))
            endpoint = f"http://127.0.0.1:{service.port}/push/phone"
            assert admin.post(SUBS, json={"endpoint": endpoint, "keys": keys}).status_code == 201
            answer = admin.post("/api/v1/push/test")
            admin.close()
    assert answer.status_code == 200
    assert b"hunter2" not in answer.content and b"internal-admin-panel" not in answer.content
    [device] = answer.json()["devices"]
    assert device["status_code"] == 400 and device["outcome"] == "failed"
    assert device["detail"] == "the push service refused the message"


def test_allowed_hosts_parse_host_and_host_port() -> None:
    allowed = AllowedHosts.parse(["relay.corp-push.test", "127.0.0.1:8443", "[::1]:9000"])
    assert allowed.admits("RELAY.corp-push.test", 1234)
    assert allowed.admits("127.0.0.1", 8443) and not allowed.admits("127.0.0.1", 8444)
    assert allowed.admits("::1", 9000) and not allowed.admits("::1", 80)
    for bad in ("", "http://relay.corp-push.test", "relay:notaport", "a@b"):
        with pytest.raises(ValueError, match="CREDENCE_PUSH_ALLOWED_HOSTS"):
            AllowedHosts.parse([bad])
