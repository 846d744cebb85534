"""URLs of the account page."""

from __future__ import annotations

from django.urls import path

from accounts import views

urlpatterns = [
    path("tokens/", views.account_tokens, name="account_tokens"),
    path("tokens/<int:pk>/revoke/", views.account_token_revoke, name="account_token_revoke"),
]
