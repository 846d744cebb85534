"""Django admin for users and their roles, and for API tokens (list, revoke)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.utils import timezone

from accounts import models
from accounts.services.tokens import token_revoke


@admin.register(models.User)
class UserAdmin(BaseUserAdmin):
    list_display = ("username", "email", "role", "is_staff", "is_active")
    list_filter = ("role", "is_staff", "is_active")
    fieldsets = (*BaseUserAdmin.fieldsets, ("Role", {"fields": ("role",)}))
    add_fieldsets = (*BaseUserAdmin.add_fieldsets, ("Role", {"fields": ("role",)}))


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are made by their owner (account page, API, `manage.py create_token`); here they are seen,
    given an expiry, and revoked. The hash is never shown or edited."""

    list_display = ("user", "name", "prefix", "scope", "created_at", "last_used_at", "expires_at", "revoked_at",
                    "is_active")
    list_filter = ("scope", ("revoked_at", admin.EmptyFieldListFilter), ("expires_at", admin.EmptyFieldListFilter))
    search_fields = ("user__username", "name", "prefix")
    fields = ("user", "name", "prefix", "scope", "created_at", "last_used_at", "expires_at", "revoked_at")
    readonly_fields = ("user", "prefix", "scope", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke",)

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(boolean=True, description="active")
    def is_active(self, token: models.ApiToken) -> bool:
        return token.is_usable(timezone.now())

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset) -> None:
        revoked = sum(token_revoke(token=token) for token in queryset)
        self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)
