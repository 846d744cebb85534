"""Schemas of the token API."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from accounts.services.tokens import MAX_EXPIRY_DAYS


class TokenIn(Schema):
    name: str = Field("script", max_length=100)
    scope: str = Field("write", description="read (GET only) or write.")
    expires_in_days: int | None = Field(None, ge=1, le=MAX_EXPIRY_DAYS, description="Empty: never expires.")


class TokenOut(Schema):
    id: int
    name: str
    prefix: str = Field(description="The token's first characters ('' for tokens made before prefixes).")
    scope: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None
    active: bool = Field(description="Neither revoked nor expired.")


class TokenCreatedOut(TokenOut):
    token: str = Field(description="The token itself: shown this once, only its hash is kept.")
