"""The token API: a user lists, creates and revokes their own tokens (`/api/tokens`)."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.utils import timezone
from ninja import Router, Status
from ninja.pagination import paginate

from accounts.models import ApiToken
from accounts.schemas import TokenCreatedOut, TokenIn, TokenOut
from accounts.services.tokens import expiry_in, token_issue, token_revoke, tokens_for

router = Router(tags=["tokens"])


def token_out(row: ApiToken) -> dict:
    return {"id": row.pk, "name": row.name, "prefix": row.prefix, "scope": row.scope, "created_at": row.created_at,
            "last_used_at": row.last_used_at, "expires_at": row.expires_at, "revoked_at": row.revoked_at,
            "active": row.is_usable(timezone.now())}


@router.get("/tokens", response=list[TokenOut], operation_id="list_tokens")
@paginate
def list_tokens(request: HttpRequest):
    """Your tokens, newest first, with prefix, scope, creation, last use, expiry and revocation."""
    return [token_out(row) for row in tokens_for(request.user)]


@router.post("/tokens", response={201: TokenCreatedOut}, operation_id="create_token")
def create_token(request: HttpRequest, payload: TokenIn):
    """A new token for you; the answer is the one time it is shown. (A read-only token cannot POST, so it
    cannot make a write token.)"""
    token, row = token_issue(user=request.user, name=payload.name, scope=payload.scope,
                             expires_at=expiry_in(payload.expires_in_days))
    return Status(201, {**token_out(row), "token": token})


@router.post("/tokens/{token_id}/revoke", response=TokenOut, operation_id="revoke_token")
def revoke_token(request: HttpRequest, token_id: int):
    """Revoke one of your tokens at once (the token this request uses included); revoking twice is harmless."""
    row = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    token_revoke(token=row)
    row.refresh_from_db()
    return token_out(row)
