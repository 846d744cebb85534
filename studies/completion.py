"""The rule a completion URL must meet: where a participant's browser is sent with their code, so nothing in it
may point somewhere other than what a reader (and Python's URL parser) sees."""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from urllib.parse import urlsplit

MAX_LENGTH = 2000
PLACEHOLDER = "{code}"
# Characters that reorder or hide text: a link could read as one host and lead to another.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
TOP_LABEL = re.compile(r"[a-z]{2,63}|xn--[a-z0-9-]{1,59}")


def completion_url_problem(url: str) -> str | None:
    """What is wrong with a completion URL, or None: https, a DNS host name (no IP literal, no localhost), no
    user or password, no backslash, no control, space or bidi character, at most one {code}."""
    if len(url) > MAX_LENGTH:
        return f"longer than {MAX_LENGTH} characters"
    if any(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Cs") or c in BIDI for c in url):
        return "must not contain spaces, control or direction-changing characters"
    if "\\" in url:
        return "must not contain a backslash (browsers read it as '/')"
    if url.count(PLACEHOLDER) > 1:
        return "at most one {code}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "not a URL"
    if parts.scheme != "https":
        return "must be an https:// address"
    if "@" in parts.netloc:
        return "must not carry a user name or password"
    host = parts.netloc.rsplit(":", 1)[0] if port is not None or parts.netloc.endswith(":") else parts.netloc
    return _host_problem(host)


def _host_problem(host: str) -> str | None:
    host = host.lower().rstrip(".")
    if not host:
        return "must name a host"
    if host.startswith("["):
        return "must name a host, not an IP address"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return "must name a host, not an IP address"
    labels = host.split(".")
    if host == "localhost" or labels[-1] == "localhost":
        return "must name a public host, not localhost"
    if len(labels) < 2 or not all(LABEL.fullmatch(label) for label in labels) or not TOP_LABEL.fullmatch(labels[-1]):
        return "must name a host such as app.prolific.com (letters, digits, '-' and dots)"
    return None
