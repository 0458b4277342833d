"""What a user gives around a target, checked before anything connects: an HTTP(S) URL and the
headers HTTP can carry, and ``K:V`` / ``K=V`` pairs from a repeatable flag."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from mcp_matrix.core.credentials import mask_url
from mcp_matrix.core.errors import InputError


def check_url(url: str, headers: Mapping[str, str], option: str) -> None:
    """An http(s) URL naming a host, and headers HTTP can carry: checked before connecting."""
    if not re.match(r"^https?://", url):
        raise InputError(f"expected an http:// or https:// URL, got {url!r}", where=option)
    import httpx  # here, not at the top: a stdio target's process never imports it

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise InputError(f"not a valid URL: {exc}", where=option) from None
    if not parsed.host:
        raise InputError(f"the URL names no host: {mask_url(url)!r}", where=option)
    for key, value in headers.items():
        for part, text in (("name", key), ("value", value)):
            try:
                text.encode("latin-1")
            except UnicodeEncodeError:
                raise InputError(
                    f"the header {part} of {key!r} has characters HTTP cannot carry (only Latin-1)",
                    where="--header",
                ) from None
        if not key or any(c in key for c in " \t\r\n:") or any(c in value for c in "\r\n\0"):
            raise InputError(f"not a valid header: {key!r}", where="--header")


def parse_pairs(items: Sequence[str], sep: str, flag: str) -> dict[str, str]:
    """``K:V`` headers (values stripped) or ``K=V`` environment entries, from a repeatable flag."""
    out = {}
    for item in items:
        if sep not in item:
            raise InputError(f"expected KEY{sep}VALUE, got {item!r}", where=flag)
        key, value = item.split(sep, 1)
        out[key.strip()] = value.strip() if sep == ":" else value
    return out
