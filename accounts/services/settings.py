"""Per-user settings of the item screen."""

from __future__ import annotations

from accounts.models import User


def user_set_auto_advance(*, user: User, on: bool) -> None:
    """Remember whether the item screen moves on by itself once an error has both verdicts."""
    User.objects.filter(pk=user.pk).update(auto_advance=on)
    user.auto_advance = on
