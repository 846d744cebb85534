"""API tokens: create one (shown once), list, revoke, and resolve a presented token to its user.

A leaked token must be stoppable without deactivating its user: tokens are listed by prefix, scope, creation
and last use, can be revoked, and may carry an expiry; a revoked or expired token is refused (401).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import ApiToken, TokenScope, User
from errors import UserError

PREFIX_LENGTH = 8
MAX_EXPIRY_DAYS = 3650


class TokenError(UserError):
    """A token request that cannot be honoured; the message says why."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def expiry_in(days: int | None) -> datetime | None:
    """The expiry `days` from now (None: never), or TokenError outside 1..MAX_EXPIRY_DAYS."""
    if days is None:
        return None
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_EXPIRY_DAYS:
        raise TokenError(f"expires_in_days must be a whole number from 1 to {MAX_EXPIRY_DAYS}, or empty for never",
                         field="expires_in_days")
    return timezone.now() + timedelta(days=days)


def token_create(*, user: User, name: str = "script", scope: str = TokenScope.WRITE,
                 expires_at: datetime | None = None) -> str:
    """Return a new token for `user` (see token_issue)."""
    return token_issue(user=user, name=name, scope=scope, expires_at=expires_at)[0]


def token_issue(*, user: User, name: str = "script", scope: str = TokenScope.WRITE,
                expires_at: datetime | None = None) -> tuple[str, ApiToken]:
    """Return a new token for `user` and its row; only its hash and first characters are kept, so this is the
    one time it is visible."""
    if scope not in TokenScope.values:
        raise TokenError(f"scope must be one of {', '.join(TokenScope.values)}, not {scope!r}", field="scope")
    name = (name or "").strip() or "script"
    if len(name) > 100 or "\x00" in name:
        raise TokenError("name: at most 100 characters, without NUL", field="name")
    if expires_at is not None and expires_at <= timezone.now():
        raise TokenError("the expiry must lie in the future", field="expires_in_days")
    token = secrets.token_urlsafe(32)
    row = ApiToken.objects.create(user=user, name=name, key_hash=_digest(token), prefix=token[:PREFIX_LENGTH],
                                  scope=scope, expires_at=expires_at)
    return token, row


def tokens_for(user: User) -> QuerySet[ApiToken]:
    """The user's tokens, newest first (revoked and expired ones included, marked by their fields)."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-pk")


def token_revoke(*, token: ApiToken) -> bool:
    """Revoke `token` from now on; False when it was already revoked."""
    return bool(ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()))


def token_lookup(token: str) -> ApiToken | None:
    """The usable token row (with its user) for a presented token, or None (unknown, revoked, expired, or
    its user deactivated)."""
    row = ApiToken.objects.select_related("user").filter(key_hash=_digest(token)).first()
    now = timezone.now()
    if row is None or not row.user.is_active or not row.is_usable(now):
        return None
    ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row
