"""The account page: your API tokens, listed, made (shown once) and revoked."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.forms import TokenForm
from accounts.models import ApiToken
from accounts.services.tokens import TokenError, expiry_in, token_issue, token_revoke, tokens_for
from errors.placing import refusal_place


@require_http_methods(["GET", "POST"])
def account_tokens(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            created, _ = token_issue(user=request.user, name=form.cleaned_data["name"],
                                     scope=form.cleaned_data["scope"],
                                     expires_at=expiry_in(form.cleaned_data["expires_in_days"]))
        except TokenError as exc:
            refusal_place(form, exc)
        else:
            form = TokenForm()
    status = 422 if request.method == "POST" and created is None else 200
    return render(request, "accounts/tokens.html", {
        "form": form, "created": created, "tokens": tokens_for(request.user), "now": timezone.now(),
    }, status=status)


@require_POST
def account_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    if token_revoke(token=token):
        messages.success(request, f"Revoked the token {token.name!r}; scripts using it now get 401.")
    return redirect("account_tokens")
