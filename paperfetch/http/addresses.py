"""Redirect safety: a public server may not send us to a private address, and nobody to a link-local or cloud
metadata one (docs/politeness.md, "Redirects"; docs/hostile.md). A name that does not resolve is not refused here:
the request fails on its own.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["METADATA_HOSTS", "Resolver", "addresses_of", "is_link_local", "is_private_address", "redirect_refusal"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., list[tuple[Any, ...]]]


#: Names of cloud metadata services (GCP, Azure, AWS, Alibaba, Oracle): never a redirect target.
METADATA_HOSTS = frozenset({
    "metadata.google.internal", "metadata.goog", "metadata", "metadata.azure.internal", "instance-data",
    "instance-data.ec2.internal", "metadata.tencentyun.com", "100.100.100.200",
})
#: AWS's IPv6 metadata endpoint (a unique-local address, not link-local) and Alibaba's metadata address.
_METADATA_ADDRESSES = frozenset({ipaddress.ip_address("fd00:ec2::254"), ipaddress.ip_address("100.100.100.200")})


def is_link_local(address: IPAddress) -> bool:
    """169.254.0.0/16, fe80::/10 (also IPv4-mapped), or a known cloud metadata address."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return address.is_link_local or address in _METADATA_ADDRESSES


def is_private_address(address: IPAddress) -> bool:
    """True for addresses the public internet cannot reach us at (or should not send us to)."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
        or address.is_reserved
        or address.is_multicast
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
    )


def addresses_of(host: str, resolver: Resolver = socket.getaddrinfo) -> list[IPAddress]:
    """The IP addresses of *host*: itself when it is a literal, else what *resolver* says ([] if nothing)."""
    literal = host.strip("[]").split("%", 1)[0]  # [fd00:ec2::254], fe80::1%eth0
    try:
        return [ipaddress.ip_address(literal)]
    except ValueError:
        pass
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
    if source and any(is_private_address(a) for a in source):
        return None  # started on a private or loopback address: the caller chose that network
    for address in targets:
        if is_private_address(address):
            return (
                f"a redirect from a public address to {target_host} ({address}), a private, loopback, link-local "
                "or unspecified address, was refused (allow_private_redirects=True allows it)"
            )
    return None
