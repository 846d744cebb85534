"""API tokens: create one (shown once) and resolve a presented token to its user."""

from __future__ import annotations

import hashlib
import secrets

from django.utils import timezone

from accounts.models import ApiToken, User


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(*, user: User, name: str = "script") -> str:
    """Return a new token for `user`; only its hash is kept, so this is the one time it is visible."""
    token = secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=name, key_hash=_digest(token))
    return token


def user_for_token(token: str) -> User | None:
    row = ApiToken.objects.select_related("user").filter(key_hash=_digest(token)).first()
    if row is None or not row.user.is_active:
        return None
    ApiToken.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
    return row.user
