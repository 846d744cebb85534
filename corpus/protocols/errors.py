"""The error every protocol's settings raise, so that no protocol imports another to get it."""

from __future__ import annotations

from errors import UserError


class ProtocolError(UserError):
    """A protocol setting that cannot be used (a tree, a weights file, a threshold), with the place it concerns."""
