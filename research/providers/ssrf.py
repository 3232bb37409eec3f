"""SSRF guard: fetch only public addresses unless an allow-list names the target.

Every host is resolved (``getaddrinfo``) and *every* resulting address is vetted; one
forbidden address refuses the host. Refused: loopback, private (10/8, 172.16/12,
192.168/16, fc00::/7), shared (100.64/10), link-local (169.254/16 with the cloud
metadata address 169.254.169.254, fe80::/10), multicast, unspecified, reserved and
anything else Python's ``ipaddress`` does not call global — also when the address is
wrapped in IPv6 (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64
``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo) — plus metadata host names.

``GuardedBackend`` is an httpcore network backend that performs this check at connect
time and connects to the vetted address itself, so a DNS answer that changes between
the check and the connection (DNS rebinding) cannot reach a forbidden address: the
address checked is the address dialled. ``SSRFGuard`` caches each host's vetted
addresses for its lifetime (one fetch), so the pre-flight check of a redirect hop and
the connection use the same answer.

Allow-list entries (``settings.FETCH_ALLOWED_HOSTS``): a host name (exact,
case-insensitive; skips all address checks for that name), an IP address, or a CIDR
network (``10.0.0.0/8``) whose addresses are then permitted for any host name.
``localhost`` and metadata names are refused by name unless listed by name.

Residual risks: proxy environment variables are ignored on purpose (a proxy would
resolve names itself, out of the guard's sight), so a deployment whose egress requires
a proxy cannot fetch; and the guard vets addresses, not ports, so a public host's
non-HTTP ports can still be addressed with an HTTP GET.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpcore

from research.providers.base import ProviderError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")


class BlockedAddress(ProviderError):
    """The target is not a public address and no allow-list entry names it (permanent)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=True, provider="fetch")


class ResolutionFailed(ProviderError):
    """DNS gave no answer; often transient, so retryable."""

    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=False, provider="fetch")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4, Teredo)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    packed = ip.packed
    if packed[:12] == bytes(12) and int(ip) > 1:  # deprecated IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(packed[12:])
    return None


def forbidden_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` must not be fetched, or None if it is a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            reason = forbidden_reason(inner)
            return f"{reason} ({inner} embedded in {ip})" if reason else None
    return _category(ip)


def _category(ip: IPAddress) -> str | None:
    checks = (
        (ip.is_unspecified, "unspecified address"),
        (ip.is_loopback, "loopback address"),
        (ip.is_link_local, "link-local address (cloud metadata lives here)"),
        (ip.is_multicast, "multicast address"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED, "shared (CGNAT) address"),
        (ip.is_private, "private address"),
        (ip.is_reserved, "reserved address"),
        (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local, "site-local address"),
        (not ip.is_global, "non-global address"),
    )
    return next((reason for hit, reason in checks if hit), None)


def parse_ip(host: str) -> IPAddress | None:
    """``host`` as a canonical IP literal (brackets and zone ids tolerated), else None."""
    value = host.strip().strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


@dataclass(frozen=True)
class AllowList:
    """Hosts and addresses that may be fetched although they are not public."""

    names: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        names: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip().lower().strip("[]")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.add(entry.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    @classmethod
    def from_settings(cls) -> AllowList:
        from django.conf import settings

        return cls.parse(settings.FETCH_ALLOWED_HOSTS)

    def allows_name(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.names

    def allows_ip(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self.networks)


@dataclass
class SSRFGuard:
    """Resolves and vets hosts; caches each host's vetted addresses (one fetch's life)."""

    allow: AllowList = field(default_factory=AllowList)
    _vetted: dict[tuple[str, int], list[IPAddress]] = field(default_factory=dict)

    async def vet(self, host: str, port: int) -> list[IPAddress]:
        """Vetted addresses for host:port; raise BlockedAddress or ResolutionFailed."""
        key = (host.lower().rstrip("."), port)
        if key not in self._vetted:
            self._vetted[key] = await self._resolve_and_check(*key)
        return self._vetted[key]

    async def _resolve_and_check(self, host: str, port: int) -> list[IPAddress]:
        literal = parse_ip(host)
        if literal is not None:
            self._check_ip(host, literal)
            return [literal]
        named = self.allow.allows_name(host)
        if not named:
            check_host_name(host)
        addresses = await resolve(host, port)
        if not named:
            for ip in addresses:
                self._check_ip(host, ip)
        return addresses

    def _check_ip(self, host: str, ip: IPAddress) -> None:
        if self.allow.allows_ip(ip) or self.allow.allows_name(str(ip)):
            return
        reason = forbidden_reason(ip)
        if reason:
            shown = host if parse_ip(host) == ip else f"{host} -> {ip}"
            raise BlockedAddress(
                f"refused to fetch {shown}: {reason}; add it to FETCH_ALLOWED_HOSTS "
                "to allow it on purpose"
            )


def check_host_name(host: str) -> None:
    """Refuse metadata and localhost names before any DNS query."""
    name = host.lower().rstrip(".")
    if name in METADATA_HOSTS:
        raise BlockedAddress(f"refused to fetch {host}: cloud metadata host name")
    if name == "localhost" or name.endswith(".localhost"):
        raise BlockedAddress(f"refused to fetch {host}: loopback host name")


async def resolve(host: str, port: int) -> list[IPAddress]:
    """All addresses of ``host`` in resolver order, de-duplicated."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ResolutionFailed(f"cannot resolve {host}: {exc}") from exc
    addresses: list[IPAddress] = []
    for info in infos:
        ip = parse_ip(str(info[4][0]))
        if ip is not None and ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise ResolutionFailed(f"cannot resolve {host}: no addresses")
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to vetted addresses, dialling the very address that was checked."""

    def __init__(self, guard: SSRFGuard) -> None:
        self.guard = guard
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.guard.vet(host, port)
        last: Exception | None = None
        for ip in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddress("refused to connect to a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
