"""Redirect safety: a public server may not send us to a private address, and nobody to a link-local or cloud
metadata one (docs/politeness.md, "Redirects"; docs/hostile.md). A name that does not resolve is not refused here:
the request fails on its own.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["METADATA_HOSTS", "Resolver", "addresses_of", "is_link_local", "is_loopback_address", "is_private_address",
           "redirect_refusal"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., list[tuple[Any, ...]]]


#: Names of cloud metadata services (GCP, Azure, AWS, Alibaba, Oracle): never a redirect target.
METADATA_HOSTS = frozenset({
    "metadata.google.internal", "metadata.goog", "metadata", "metadata.azure.internal", "instance-data",
    "instance-data.ec2.internal", "metadata.tencentyun.com", "100.100.100.200",
})
#: AWS's IPv6 metadata endpoint (a unique-local address, not link-local) and Alibaba's metadata address.
_METADATA_ADDRESSES = frozenset({ipaddress.ip_address("fd00:ec2::254"), ipaddress.ip_address("100.100.100.200")})


#: Carrier-grade NAT (RFC 6598): a provider's private network, not the public internet.
_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")
#: The NAT64 well-known prefix (RFC 6052): the IPv4 address it embeds is the one reached.
_NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")
#: What a numeric IPv4 host in a shorthand form (``127.1``, ``2130706433``, ``0x7f.0.0.1``) is made of.
_NUMERIC_HOST = re.compile(r"[0-9a-fA-FxX.]+")
_LOOPBACK_NAMES = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))


def _reached(address: IPAddress) -> IPAddress:
    """The IPv4 address a connection to *address* reaches when it embeds one (IPv4-mapped, NAT64, 6to4),
    else *address*."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64_PREFIX:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if address.sixtofour is not None:
            return address.sixtofour
    return address


def is_link_local(address: IPAddress) -> bool:
    """169.254.0.0/16, fe80::/10 (also IPv4-mapped), or a known cloud metadata address."""
    address = _reached(address)
    return address.is_link_local or address in _METADATA_ADDRESSES


def is_loopback_address(address: IPAddress) -> bool:
    """127.0.0.0/8, ::1, or the unspecified 0.0.0.0 and :: (a connection to them reaches this machine)."""
    address = _reached(address)
    return address.is_loopback or address.is_unspecified


def is_private_address(address: IPAddress) -> bool:
    """True for addresses the public internet cannot reach us at (or should not send us to): RFC 1918, carrier-grade
    NAT 100.64.0.0/10, loopback, link-local, unspecified, reserved, multicast, unique-local fc00::/7 and site-local."""
    address = _reached(address)
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
        or address.is_reserved
        or address.is_multicast
        or (isinstance(address, ipaddress.IPv4Address) and address in _SHARED_ADDRESS_SPACE)
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
    )


def _literal(host: str) -> IPAddress | None:
    """*host* as an IP address when it is one, in any form a connection accepts (``[::1]``, ``fe80::1%eth0``,
    ``127.0.0.1.``, ``127.1``, ``2130706433``, ``0x7f000001``), read without asking any resolver."""
    literal = host.strip("[]").split("%", 1)[0].rstrip(".")
    try:
        return ipaddress.ip_address(literal)
    except ValueError:
        pass
    if literal and _NUMERIC_HOST.fullmatch(literal):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(literal))
        except (OSError, ValueError):
            return None
    return None


def addresses_of(host: str, resolver: Resolver = socket.getaddrinfo) -> list[IPAddress]:
    """The IP addresses of *host*: itself when it is a literal, loopback for ``localhost`` and its subdomains
    (RFC 6761), else what *resolver* says ([] if nothing)."""
    literal = _literal(host)
    if literal is not None:
        return [literal]
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return list(_LOOPBACK_NAMES)
    try:
        infos = resolver(host, None, 0, socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        return []
    found = []
    for info in infos:
        try:
            found.append(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]))
        except (ValueError, IndexError, TypeError):
            continue
    return found


def redirect_refusal(
    from_url: str, to_url: str, allow_private: bool = False, resolver: Resolver = socket.getaddrinfo
) -> str | None:
    """Why the redirect *from_url* -> *to_url* is refused, or ``None`` when it may be followed."""
    try:
        source_host = urlsplit(from_url).hostname or ""
        target_host = urlsplit(to_url).hostname or ""
    except ValueError:
        return "the redirect target is not a valid URL"
    if not target_host:
        return None  # no host: the transport refuses it as an invalid URL
    if target_host.lower().rstrip(".") in METADATA_HOSTS:
        return f"a redirect to {target_host}, a cloud metadata service, was refused (from any address)"
    targets = addresses_of(target_host, resolver)
    for address in targets:
        if is_link_local(address):
            return (f"a redirect to {target_host} ({address}), a link-local or cloud metadata address, was refused "
                    "(from any address)")
    if allow_private:
        return None
    source = addresses_of(source_host, resolver)
    if source and all(is_loopback_address(a) for a in source):
        return None  # started on this machine: the caller chose it, and the networks it reaches
    if source and all(is_private_address(a) for a in source):
        for address in targets:  # started on a private network: it may lead within private networks, not here
            if is_loopback_address(address):
                return (f"a redirect from a private address to {target_host} ({address}), a loopback or unspecified "
                        "address, was refused (allow_private_redirects=True allows it)")
        return None
    for address in targets:  # a public origin (or one with any public address, or none known)
        if is_private_address(address):
            return (
                f"a redirect from a public address to {target_host} ({address}), a private, loopback, link-local "
                "or unspecified address, was refused (allow_private_redirects=True allows it)"
            )
    return None
