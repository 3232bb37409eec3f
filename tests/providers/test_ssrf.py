"""The SSRF guard refuses non-public targets by default, after DNS and on redirects."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import replace

import pytest

from research.providers.base import ProviderError
from research.providers.fetcher import FetchOptions, UnsupportedURL, fetch_url_sync
from research.providers.ssrf import (
    AllowList,
    BlockedAddress,
    SSRFGuard,
    embedded_ipv4,
    forbidden_reason,
)

FORBIDDEN = [
    "127.0.0.1",
    "127.255.0.9",
    "10.0.0.1",
    "10.255.255.254",
    "172.16.0.1",
    "172.31.255.1",
    "192.168.1.1",
    "169.254.169.254",
    "169.254.0.1",
    "100.64.0.1",
    "100.100.100.200",
    "0.0.0.0",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fc00::1",
    "fd00:ec2::254",
    "fe80::1",
    "fec0::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "2002:7f00:1::",
    "2002:a00:1::",
]
PUBLIC = ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


def _options(**overrides):
    base = FetchOptions(timeout_s=2.0, max_redirects=5, allowed_hosts=())
    return replace(base, **overrides)


def _fake_dns(monkeypatch, answers):
    """Make getaddrinfo answer from ``answers`` (host -> list of IPs); count the calls."""
    calls = []
    real = socket.getaddrinfo

    def fake_getaddrinfo(host, port, *args, **kwargs):
        if _is_ip(host):
            return real(host, port, *args, **kwargs)
        calls.append(host)
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        result = []
        for ip in answers[host] if isinstance(answers[host], list) else answers[host]():
            family = socket.AF_INET6 if ":" in ip else socket.AF_INET
            sockaddr = (ip, port, 0, 0) if family == socket.AF_INET6 else (ip, port)
            result.append((family, socket.SOCK_STREAM, 6, "", sockaddr))
        return result

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    return calls


def _is_ip(host):
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("address", FORBIDDEN)
def test_it_classifies_non_public_addresses_as_forbidden(address):
    assert forbidden_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", PUBLIC)
def test_it_lets_public_addresses_through(address):
    assert forbidden_reason(ipaddress.ip_address(address)) is None


def test_it_finds_ipv4_inside_ipv6_wrappers():
    assert str(embedded_ipv4(ipaddress.IPv6Address("::ffff:10.0.0.1"))) == "10.0.0.1"
    assert str(embedded_ipv4(ipaddress.IPv6Address("64:ff9b::a00:1"))) == "10.0.0.1"
    assert str(embedded_ipv4(ipaddress.IPv6Address("2002:a00:1::"))) == "10.0.0.1"
    assert embedded_ipv4(ipaddress.IPv6Address("2606:4700:4700::1111")) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://127.0.0.1:8000/admin",
        "http://10.0.0.1/",
        "http://10.200.3.4:8080/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://0.0.0.0/",
    ],
)
def test_it_refuses_non_public_urls_by_default(url):
    with pytest.raises(BlockedAddress) as info:
        fetch_url_sync(url, options=_options())
    assert info.value.permanent is True
    assert "refused" in str(info.value)


def test_it_refuses_by_default_when_read_from_settings(settings):
    settings.FETCH_ALLOWED_HOSTS = []
    with pytest.raises(BlockedAddress):
        fetch_url_sync("http://127.0.0.1:9/")


@pytest.mark.parametrize(
    ("host", "ip"),
    [
        ("intranet.example.com", "10.0.0.7"),
        ("rebind.example.com", "169.254.169.254"),
        ("six.example.com", "::1"),
        ("mapped.example.com", "::ffff:192.168.0.10"),
    ],
)
def test_it_refuses_host_names_that_resolve_to_forbidden_addresses(monkeypatch, host, ip):
    _fake_dns(monkeypatch, {host: [ip]})
    with pytest.raises(BlockedAddress) as info:
        fetch_url_sync(f"http://{host}/page", options=_options())
    assert ip.removeprefix("::ffff:") in str(info.value)


def test_it_refuses_a_host_when_any_of_its_addresses_is_forbidden(monkeypatch):
    _fake_dns(monkeypatch, {"mixed.example.com": ["93.184.215.14", "10.0.0.7"]})
    with pytest.raises(BlockedAddress):
        fetch_url_sync("http://mixed.example.com/", options=_options())


def test_it_refuses_localhost_and_metadata_names_before_dns(monkeypatch):
    calls = _fake_dns(monkeypatch, {})
    for host in ["localhost", "api.localhost", "metadata.google.internal", "METADATA."]:
        with pytest.raises(BlockedAddress):
            fetch_url_sync(f"http://{host}/", options=_options())
    assert calls == []


def test_it_refuses_odd_spellings_of_loopback_after_resolution():
    # glibc resolves these integer / short forms to 127.0.0.1.
    for url in ["http://2130706433/", "http://0x7f000001/", "http://127.1/"]:
        with pytest.raises((BlockedAddress, UnsupportedURL)):
            fetch_url_sync(url, options=_options())


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://127.0.0.1:25/", "http:///x"]
)
def test_it_refuses_urls_that_are_not_http(url):
    with pytest.raises(UnsupportedURL) as info:
        fetch_url_sync(url, options=_options())
    assert info.value.permanent is True


def test_it_reports_a_name_that_does_not_resolve_as_retryable(monkeypatch):
    _fake_dns(monkeypatch, {})
    with pytest.raises(ProviderError) as info:
        fetch_url_sync("http://no-such-host.example/", options=_options())
    assert info.value.permanent is False
    assert "cannot resolve" in str(info.value)


def test_it_parses_allow_list_entries_as_names_ips_and_networks():
    allow = AllowList.parse(["127.0.0.1", "10.0.0.0/8", "SearXNG.internal.", "[::1]", " "])
    assert allow.allows_ip(ipaddress.ip_address("127.0.0.1"))
    assert allow.allows_ip(ipaddress.ip_address("10.9.8.7"))
    assert allow.allows_ip(ipaddress.ip_address("::1"))
    assert not allow.allows_ip(ipaddress.ip_address("192.168.0.1"))
    assert allow.allows_name("searxng.internal")


def test_it_allows_a_listed_network_for_any_name_resolving_into_it(monkeypatch):
    _fake_dns(monkeypatch, {"wiki.corp": ["10.1.2.3"], "other.corp": ["192.168.5.5"]})
    guard = SSRFGuard(AllowList.parse(["10.0.0.0/8"]))
    assert [str(ip) for ip in asyncio.run(guard.vet("wiki.corp", 80))] == ["10.1.2.3"]
    with pytest.raises(BlockedAddress):
        asyncio.run(guard.vet("other.corp", 80))


def test_it_allows_a_listed_host_name_whatever_it_resolves_to(monkeypatch):
    _fake_dns(monkeypatch, {"searxng": ["172.18.0.4"]})
    guard = SSRFGuard(AllowList.parse(["searxng"]))
    assert [str(ip) for ip in asyncio.run(guard.vet("searxng", 8080))] == ["172.18.0.4"]


def test_it_refuses_a_redirect_to_a_private_address(local_server):
    url = local_server.url("/redirect?to=http://10.0.0.1/internal")
    with pytest.raises(BlockedAddress) as info:
        fetch_url_sync(url, options=_options(allowed_hosts=("127.0.0.1",)))
    assert "10.0.0.1" in str(info.value)


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/iam",
        "http://[::1]:{port}/page.html",
        "http://localhost:{port}/page.html",
        "http://metadata.google.internal/computeMetadata/v1/",
    ],
)
def test_it_refuses_redirects_to_other_forbidden_targets(local_server, target):
    location = target.format(port=local_server.port)
    url = local_server.url(f"/redirect?status=307&to={location}")
    with pytest.raises(BlockedAddress):
        fetch_url_sync(url, options=_options(allowed_hosts=("127.0.0.1",)))


def test_it_refuses_a_redirect_to_a_name_that_resolves_privately(local_server, monkeypatch):
    _fake_dns(monkeypatch, {"evil.example.com": ["192.168.1.20"]})
    url = local_server.url("/redirect?to=http://evil.example.com/")
    with pytest.raises(BlockedAddress) as info:
        fetch_url_sync(url, options=_options(allowed_hosts=("127.0.0.1",)))
    assert "192.168.1.20" in str(info.value)


def test_it_dials_the_address_it_vetted_even_if_dns_changes(local_server, monkeypatch):
    """DNS rebinding: the second answer would be forbidden, but it is never asked for."""
    answers = iter([["127.0.0.1"], ["10.0.0.1"], ["10.0.0.1"]])
    calls = _fake_dns(monkeypatch, {"rebind.test": lambda: next(answers)})
    url = f"http://rebind.test:{local_server.port}/page.html"
    result = fetch_url_sync(url, options=_options(allowed_hosts=("127.0.0.1",)))
    assert result.status == 200
    assert calls == ["rebind.test"]
