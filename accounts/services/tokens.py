"""API tokens: create one (shown once) and resolve a presented token to its user."""

from __future__ import annotations

import hashlib
import secrets

from django.utils import timezone

from accounts.models import ApiToken, TokenScope, User


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(*, user: User, name: str = "script", scope: str = TokenScope.WRITE) -> str:
    """Return a new token for `user`; only its hash is kept, so this is the one time it is visible."""
    if scope not in TokenScope.values:
        raise ValueError(f"scope must be one of {', '.join(TokenScope.values)}, not {scope!r}")
    token = secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=name, key_hash=_digest(token), scope=scope)
    return token


def token_lookup(token: str) -> ApiToken | None:
    """The active token row (with its user) for a presented token, or None."""
    row = ApiToken.objects.select_related("user").filter(key_hash=_digest(token)).first()
    if row is None or not row.user.is_active:
        return None
    ApiToken.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
    return row
